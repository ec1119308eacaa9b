# A user's session with python-gitlab (Debian's python3-gitlab) against Labwright.
# Usage: python3 python_gitlab_flow.py <url> <root-token>; prints one JSON object of observations.
import json
import sys
import warnings

import gitlab

url, token = sys.argv[1], sys.argv[2]
out = {}
warnings.simplefilter("error")  # python-gitlab warns on a foreign web_url base or a broken Link

gl = gitlab.Gitlab(url, private_token=token)
gl.auth()
out["user"] = gl.user.username
out["version"] = list(gl.version())

# Users and tokens (admin)
alice = gl.users.create({"username": "pyalice", "email": "pyalice@example.com", "name": "Py Alice", "password": "password-1234"})
out["alice_id"] = alice.id
for i in range(5):
    gl.users.create({"username": f"pyuser{i}", "email": f"pyuser{i}@example.com", "name": f"Py User {i}", "password": "password-1234"})
out["users_all"] = len(gl.users.list(get_all=True, per_page=2))
out["users_iter"] = len(list(gl.users.list(iterator=True, per_page=3)))
pat = alice.personal_access_tokens.create({"name": "py", "scopes": ["api"]})
out["pat_prefix"] = pat.token[:6]

# Groups and namespaces
group = gl.groups.create({"name": "Py Group", "path": "py-group"})
sub = gl.groups.create({"name": "Py Sub", "path": "py-sub", "parent_id": group.id})
out["subgroups"] = [g.full_path for g in group.subgroups.list(get_all=True)]
out["group_by_path"] = gl.groups.get("py-group/py-sub").id == sub.id
out["namespace_exists"] = gl.namespaces.get("py-group").kind

# Projects, files, branches, commits
project = gl.projects.create({"name": "py-project", "namespace_id": group.id, "initialize_with_readme": True})
out["project_path"] = project.path_with_namespace
p = gl.projects.get("py-group/py-project")
out["default_branch"] = p.default_branch
p.files.create({"file_path": "src/app.py", "branch": "main", "content": "print('hi')\n", "commit_message": "add app"})
f = p.files.get(file_path="src/app.py", ref="main")
out["file_content"] = f.decode().decode()
p.branches.create({"branch": "feature", "ref": "main"})
p.commits.create({
    "branch": "feature",
    "commit_message": "feature work",
    "actions": [{"action": "update", "file_path": "src/app.py", "content": "print('feature')\n"}],
})
out["branches"] = sorted(b.name for b in p.branches.list(get_all=True))
out["commits_on_feature"] = len(p.commits.list(ref_name="feature", get_all=True))
member = p.members.create({"user_id": alice.id, "access_level": 30})
out["member_level"] = member.access_level

# Tags
p.tags.create({"tag_name": "v1.0.0", "ref": "main", "message": "First release"})
p.tags.create({"tag_name": "v1.1.0", "ref": "feature"})
out["tags"] = sorted(t.name for t in p.tags.list(get_all=True))
out["tag_message"] = p.tags.get("v1.0.0").message
p.tags.delete("v1.1.0")
out["tags_after_delete"] = [t.name for t in p.tags.list(get_all=True)]

# Releases, as release tooling makes them
release = p.releases.create({
    "tag_name": "v1.0.0",
    "name": "Version 1",
    "description": "First release",
    "assets": {"links": [{"name": "binary", "url": "https://downloads.example.com/v1/app"}]},
})
out["release_name"] = release.name
release = p.releases.get("v1.0.0")
out["release_links"] = [link.name for link in release.links.list(get_all=True)]
release.description = "First release, edited"
release.save()
out["release_description"] = p.releases.get("v1.0.0").description
out["releases"] = [r.tag_name for r in p.releases.list(get_all=True)]
out["tag_release"] = p.tags.get("v1.0.0").release

# Merge requests
mr = p.mergerequests.create({"source_branch": "feature", "target_branch": "main", "title": "Feature"})
out["mr_iid"] = mr.iid
out["mr_list"] = [m.iid for m in p.mergerequests.list(state="opened", get_all=True)]
mr = p.mergerequests.get(mr.iid)
out["mr_changes"] = len(mr.changes()["changes"])

# Comments and threads, as a review bot writes them
note = mr.notes.create({"body": "Build passed"})
note.body = "Build passed (edited)"
note.save()
out["mr_notes"] = [n.body for n in mr.notes.list(get_all=True)]
thread = mr.discussions.create({"body": "Please add a test"})
thread.notes.create({"body": "Added"})
thread = mr.discussions.get(thread.id)
thread.resolved = True
thread.save()
thread = mr.discussions.get(thread.id)
out["mr_thread"] = [[n["body"], n["resolved"]] for n in thread.attributes["notes"]]
out["mr_discussions"] = len(mr.discussions.list(get_all=True))
out["mr_user_notes_count"] = p.mergerequests.get(mr.iid).user_notes_count
mr.notes.delete(note.id)
out["mr_notes_after_delete"] = len(mr.notes.list(get_all=True))

mr.merge()
mr = p.mergerequests.get(mr.iid)
out["mr_state"] = mr.state
out["mr_merge_commit"] = bool(mr.merge_commit_sha)

# Protected branches and tags, as a bot that guards release branches
out["main_protected"] = p.branches.get("main").protected
pb = p.protectedbranches.create({
    "name": "release/*",
    "push_access_level": gitlab.const.AccessLevel.NO_ACCESS,
    "merge_access_level": gitlab.const.AccessLevel.DEVELOPER,
})
out["protected_branches"] = sorted(b.name for b in p.protectedbranches.list(get_all=True))
pb = p.protectedbranches.get("release/*")
out["protected_release"] = [pb.push_access_levels[0]["access_level"], pb.merge_access_levels[0]["access_level_description"]]
p.protectedbranches.delete("release/*")
out["protected_after_delete"] = [b.name for b in p.protectedbranches.list(get_all=True)]
p.protectedtags.create({"name": "v*", "create_access_level": gitlab.const.AccessLevel.MAINTAINER})
out["protected_tags"] = [[t.name, t.create_access_levels[0]["access_level"]] for t in p.protectedtags.list(get_all=True)]
out["tag_protected"] = p.tags.get("v1.0.0").protected
try:
    p.protectedbranches.create({"name": "main"})
except gitlab.exceptions.GitlabCreateError as e:
    out["protected_duplicate"] = [e.response_code, str(e.error_message)]

# Webhooks, as a bot registers one: a receiver in this process, a hook, a commit that fires it
import http.server
import threading

hook_calls = []


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        hook_calls.append({"event": self.headers["X-Gitlab-Event"], "token": self.headers.get("X-Gitlab-Token"), "kind": body["object_kind"], "ref": body.get("ref")})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=srv.serve_forever, daemon=True).start()
hook = p.hooks.create({"url": f"http://127.0.0.1:{srv.server_port}/hook", "push_events": True, "merge_requests_events": True, "token": "py-secret"})
hook.push_events_branch_filter = "main"
hook.save()
out["hooks"] = [[h.url.endswith("/hook"), h.push_events, h.merge_requests_events, h.push_events_branch_filter] for h in p.hooks.list(get_all=True)]
p.files.create({"file_path": "hooked.txt", "branch": "main", "content": "x", "commit_message": "fire the hook"})
import time

for _ in range(100):
    if hook_calls:
        break
    time.sleep(0.05)
out["hook_calls"] = hook_calls
p.hooks.delete(hook.id)
out["hooks_after_delete"] = len(p.hooks.list(get_all=True))
srv.shutdown()

# Forks, as a contributor works: fork a public project, commit in the fork, a merge request to
# the upstream, which its owner merges
upstream = gl.projects.create({"name": "py-up", "visibility": "public", "initialize_with_readme": True})
bob = gl.users.create({"username": "pybob", "email": "pybob@example.com", "name": "Py Bob", "password": "password-1234"})
gb = gitlab.Gitlab(url, private_token=bob.personal_access_tokens.create({"name": "bob", "scopes": ["api"]}).token)
fork = gb.projects.get(upstream.id, lazy=True).forks.create({})
fp = gb.projects.get(fork.id)
out["fork"] = [fp.path_with_namespace, fp.forked_from_project["id"] == upstream.id, fp.import_status]
fp.commits.create({"branch": "fix", "start_branch": "main", "commit_message": "fix", "actions": [{"action": "create", "file_path": "fix.txt", "content": "fix\n"}]})
fmr = fp.mergerequests.create({"source_branch": "fix", "target_branch": "main", "title": "Fix from fork", "target_project_id": upstream.id})
out["fork_mr"] = [fmr.project_id == upstream.id, fmr.source_project_id == fork.id, fmr.target_project_id == upstream.id]
out["forks"] = [f.path_with_namespace for f in upstream.forks.list(get_all=True)]
umr = gl.projects.get(upstream.id).mergerequests.get(fmr.iid)
out["fork_mr_changes"] = [c["new_path"] for c in umr.changes()["changes"]]
umr.merge()
out["fork_mr_state"] = gl.projects.get(upstream.id).mergerequests.get(fmr.iid).state
out["upstream_forks_count"] = gl.projects.get(upstream.id).forks_count
fp.delete_fork_relation()
out["fork_after_unlink"] = "forked_from_project" in gb.projects.get(fork.id).attributes

# Stars
up_for_stars = gb.projects.get(upstream.id)
up_for_stars.star()
out["star_count"] = up_for_stars.star_count
out["starrers"] = [st["user"]["username"] for st in gb.http_list(f"/projects/{upstream.id}/starrers", get_all=True)]
out["starred"] = [sp.id == upstream.id for sp in gb.projects.list(starred=True, get_all=True)]
up_for_stars.unstar()
out["star_count_after"] = up_for_stars.star_count

# Errors as python-gitlab raises them
try:
    gl.projects.get("py-group/nope")
except gitlab.exceptions.GitlabGetError as e:
    out["missing_project"] = [e.response_code, str(e.error_message)]
try:
    gitlab.Gitlab(url, private_token="wrong").auth()
except gitlab.exceptions.GitlabAuthenticationError as e:
    out["bad_token"] = e.response_code

print(json.dumps(out))
