# A user's issue-tracking session with python-gitlab (Debian's python3-gitlab) against Labwright:
# issues with labels, assignees, milestones and checklists; filtered and keyset-paginated lists in
# the three scopes; edits, close and reopen; comments and threads; award emoji; time tracking;
# subscriptions; participants; statistics; a merge request that says "Closes #n" and closes the
# issue when merged; deletion.
# Usage: python3 python_gitlab_issues_flow.py <url> <root-token>; prints one JSON object of
# observations (the last line of stdout).
import json
import sys
import warnings

import gitlab

url, token = sys.argv[1], sys.argv[2]
out = {}
warnings.simplefilter("error")  # python-gitlab warns on a foreign web_url base or a broken Link


def step(name, fn):
    """Records fn()'s value under name, or the error a user would see, so that one server defect
    does not hide the observations after it."""
    try:
        out[name] = fn()
    except gitlab.exceptions.GitlabError as e:
        out[name] = {"error": e.response_code, "message": str(e.error_message)}
    except Exception as e:  # noqa: BLE001 - reported to the test as an observation
        out[name] = {"exception": f"{type(e).__name__}: {e}"}


gl = gitlab.Gitlab(url, private_token=token)
gl.auth()

# Set-up: a group, a project in it, a developer with her own client, a milestone
alice = gl.users.create({"username": "issalice", "email": "issalice@example.com", "name": "Iss Alice", "password": "password-1234"})
ga = gitlab.Gitlab(url, private_token=alice.personal_access_tokens.create({"name": "a", "scopes": ["api"]}).token)
group = gl.groups.create({"name": "Issue Group", "path": "iss-group"})
project = gl.projects.create({"name": "tracker", "namespace_id": group.id, "initialize_with_readme": True})
project.members.create({"user_id": alice.id, "access_level": gitlab.const.AccessLevel.DEVELOPER})
milestone = project.milestones.create({"title": "v1.0", "description": "First release"})
pa = ga.projects.get(project.id)  # alice's view of the project

# Creating issues, as a person filing a bug and a bot filing chores
bug = project.issues.create({
    "title": "Crash on start",
    "description": "Steps:\n- [x] open the app\n- [ ] press start\n- [ ] see the crash",
    "labels": ["bug", "critical"],
    "assignee_ids": [alice.id],
    "milestone_id": milestone.id,
})
out["bug_created"] = {
    "iid": bug.iid,
    "title": bug.title,
    "state": bug.state,
    "labels": sorted(bug.labels),
    "assignees": [a["username"] for a in bug.assignees],
    "assignee": bug.assignee["username"] if bug.assignee else None,
    "milestone": bug.milestone["title"] if bug.milestone else None,
    "author": bug.author["username"],
    "tasks": bug.task_completion_status,
    "web_url": bug.web_url,
    "references": bug.references["full"],
}
feat = project.issues.create({"title": "Add dark mode", "labels": ["feature"], "description": "Users keep asking"})
docs = pa.issues.create({"title": "Document the CLI", "labels": ["docs"]})
for i in range(5):
    project.issues.create({"title": f"Chore {i}", "labels": ["chore"]})
out["iids"] = [bug.iid, feat.iid, docs.iid]
out["labels_created"] = sorted(lbl.name for lbl in project.labels.list(get_all=True))

# Lists and filters
out["open_titles"] = sorted(i.title for i in project.issues.list(state="opened", get_all=True))
out["by_label"] = [i.title for i in project.issues.list(labels=["bug"], get_all=True)]
out["by_two_labels"] = [i.title for i in project.issues.list(labels=["bug", "critical"], get_all=True)]
out["by_search"] = [i.title for i in project.issues.list(search="dark", get_all=True)]
out["by_milestone"] = [i.title for i in project.issues.list(milestone="v1.0", get_all=True)]
out["by_assignee"] = [i.title for i in project.issues.list(assignee_id=alice.id, get_all=True)]
out["by_author"] = [i.title for i in project.issues.list(author_id=alice.id, get_all=True)]
out["iterator_count"] = len(list(project.issues.list(iterator=True, per_page=3)))
out["get_all_count"] = len(project.issues.list(get_all=True, per_page=2))
out["default_order"] = [i.iid for i in project.issues.list(get_all=True)]  # created_at desc
out["iids_filter"] = sorted(i.iid for i in project.issues.list(iids=[bug.iid, docs.iid], get_all=True))
out["open_issues_count"] = gl.projects.get(project.id).open_issues_count

# Keyset pagination, as an exporter walks a big tracker
out["keyset_asc"] = [i.iid for i in project.issues.list(pagination="keyset", order_by="created_at", sort="asc", per_page=3, iterator=True)]
out["keyset_desc"] = [i.iid for i in project.issues.list(pagination="keyset", order_by="created_at", per_page=3, iterator=True)]
out["keyset_get_all"] = len(project.issues.list(pagination="keyset", order_by="created_at", per_page=2, get_all=True))

# Editing: title, labels, then close and reopen through state_event
bug = project.issues.get(bug.iid)
bug.title = "Crash on startup"
bug.labels = ["bug", "critical", "regression"]
bug.save()
out["after_edit"] = [bug.title, sorted(bug.labels)]
bug.state_event = "close"
bug.save()
# closed_by is both a field and a method of ProjectIssue: the field is read through attributes
out["after_close"] = [bug.state, (bug.attributes["closed_by"] or {}).get("username"), bool(bug.closed_at)]
out["closed_list"] = [i.title for i in project.issues.list(state="closed", get_all=True)]
bug = project.issues.get(bug.iid)
bug.state_event = "reopen"
bug.save()
out["after_reopen"] = [bug.state, bug.attributes["closed_by"], bug.closed_at]
out["closed_after_reopen"] = [i.title for i in project.issues.list(state="closed", get_all=True)]

# Comments and threads
bug.notes.create({"body": "I can reproduce this"})
abug = pa.issues.get(bug.iid)
abug.notes.create({"body": "Fix coming"})
out["notes"] = [n.body for n in bug.notes.list(get_all=True, sort="asc") if not n.system]
out["notes_authors"] = [n.author["username"] for n in bug.notes.list(get_all=True, sort="asc") if not n.system]
thread = bug.discussions.create({"body": "Linux only?"})
thread.notes.create({"body": "Also on macOS"})
thread = bug.discussions.get(thread.id)
out["thread"] = [n["body"] for n in thread.attributes["notes"]]
out["thread_individual"] = thread.individual_note
discussions = bug.discussions.list(get_all=True)
out["discussions"] = len([d for d in discussions if not d.attributes["notes"][0]["system"]])
out["user_notes_count"] = project.issues.get(bug.iid).user_notes_count

# Award emoji: both users vote up, alice changes her mind on another emoji
bug.awardemojis.create({"name": "thumbsup"})
abug.awardemojis.create({"name": "thumbsup"})
tada = abug.awardemojis.create({"name": "tada"})
out["awards"] = sorted([a.name, a.user["username"]] for a in bug.awardemojis.list(get_all=True))
abug.awardemojis.delete(tada.id)
out["awards_after_delete"] = len(bug.awardemojis.list(get_all=True))
out["upvotes"] = project.issues.get(bug.iid).upvotes
out["my_reaction"] = [i.title for i in ga.issues.list(my_reaction_emoji="thumbsup", scope="all", get_all=True)]

# Time tracking
out["estimate"] = bug.time_estimate("3h30m")
bug.add_spent_time("1h")
out["spent"] = bug.add_spent_time("30m")
ts = project.issues.get(bug.iid).time_stats()
out["time_stats"] = [ts["time_estimate"], ts["total_time_spent"], ts["human_time_estimate"], ts["human_total_time_spent"]]
bug.reset_spent_time()
bug.reset_time_estimate()
ts = project.issues.get(bug.iid, lazy=True)
out["time_stats_reset"] = [ts.time_stats()["time_estimate"], ts.time_stats()["total_time_spent"]]

# Subscriptions: alice (not a participant of the feature request) subscribes and unsubscribes
afeat = pa.issues.get(feat.iid)
out["subscribed_before"] = afeat.subscribed
afeat.subscribe()
out["subscribed_after"] = [afeat.subscribed, pa.issues.get(feat.iid).subscribed]


def subscribe_twice():
    try:
        afeat.subscribe()
        return "no error"
    except gitlab.exceptions.GitlabSubscribeError as e:
        return e.response_code


out["subscribe_twice"] = subscribe_twice()
afeat.unsubscribe()
out["unsubscribed"] = [afeat.subscribed, pa.issues.get(feat.iid).subscribed]

# Participants: the author, the assignee, the commenters
out["participants"] = sorted(u["username"] for u in bug.participants())

# Statistics in three scopes
step("project_stats", lambda: project.issues_statistics.get().statistics["counts"])
step("group_stats", lambda: group.issues_statistics.get().statistics["counts"])
step("global_stats", lambda: gl.issues_statistics.get().statistics["counts"])
step("project_stats_bug", lambda: project.issues_statistics.get(labels="bug").statistics["counts"])

# Lists across projects: mine, assigned to me, the group's
step("global_mine", lambda: len(gl.issues.list(get_all=True)))
step("global_all", lambda: len(gl.issues.list(scope="all", get_all=True)))
step("alice_created", lambda: [i.title for i in ga.issues.list(get_all=True)])
step("alice_assigned", lambda: [i.title for i in ga.issues.list(scope="assigned_to_me", get_all=True)])
step("group_issues", lambda: len(group.issues.list(get_all=True)))
step("group_by_label", lambda: [i.title for i in group.issues.list(labels=["feature"], get_all=True)])
step("global_get", lambda: gl.issues.get(bug.id).title)

# Milestone issues
step("milestone_issues", lambda: [i.title for i in milestone.issues()])

# A merge request that closes the bug when merged
project.commits.create({
    "branch": "fix-crash",
    "start_branch": "main",
    "commit_message": "Fix the crash",
    "actions": [{"action": "create", "file_path": "fix.txt", "content": "fixed\n"}],
})
mr = project.mergerequests.create({
    "source_branch": "fix-crash",
    "target_branch": "main",
    "title": "Fix the crash on startup",
    "description": f"Closes #{bug.iid}\n\nAlso relates to #{feat.iid}",
})
step("closes_issues", lambda: [i.iid for i in mr.closes_issues()])
step("closed_by", lambda: [m["iid"] for m in project.issues.get(bug.iid).closed_by()])
step("related_mrs", lambda: [m["iid"] for m in project.issues.get(bug.iid).related_merge_requests()])
step("bug_mr_count", lambda: project.issues.get(bug.iid).merge_requests_count)
mr.merge()
out["mr_state"] = project.mergerequests.get(mr.iid).state
closed = project.issues.get(bug.iid)
out["bug_after_merge"] = [closed.state, (closed.attributes["closed_by"] or {}).get("username")]
out["feat_after_merge"] = project.issues.get(feat.iid).state
step("project_stats_after_merge", lambda: project.issues_statistics.get().statistics["counts"])

# Reassigning: assign and set a milestone, then clear both (assignee_ids=[] and milestone_id=0)
feat = project.issues.get(feat.iid)
feat.assignee_ids = [alice.id]
feat.milestone_id = milestone.id
feat.save()
out["feat_assigned"] = [[a["username"] for a in feat.assignees], (feat.milestone or {}).get("title")]
feat.assignee_ids = []
feat.milestone_id = 0
feat.save()
feat = project.issues.get(feat.iid)
out["feat_cleared"] = [feat.assignees, feat.assignee, feat.milestone]

# Deletion: a developer may not, the owner may
try:
    pa.issues.delete(docs.iid)
    out["developer_delete"] = "deleted"
except gitlab.exceptions.GitlabDeleteError as e:
    out["developer_delete"] = [e.response_code, str(e.error_message)]
project.issues.get(docs.iid).delete()
try:
    project.issues.get(docs.iid)
    out["after_delete"] = "still there"
except gitlab.exceptions.GitlabGetError as e:
    out["after_delete"] = [e.response_code, str(e.error_message)]
out["count_after_delete"] = len(project.issues.list(get_all=True))

# Search (gl.search / group.search / project.search), as scripts look things up
out["search_issues"] = sorted(i["title"] for i in gl.search("issues", "dark mode"))
out["search_project_issues"] = [i["iid"] for i in project.search("issues", "dark mode")]
out["search_projects"] = [p["name"] for p in gl.search("projects", "tracker")]
out["search_group_mrs"] = len(group.search("merge_requests", "nothing-matches-this"))
out["search_blobs"] = [b["path"] for b in project.search("blobs", "TRACKER")]
try:
    gl.search("blobs", "readme")
except gitlab.exceptions.GitlabSearchError as e:
    out["global_blobs"] = e.response_code

# Errors as python-gitlab raises them
try:
    project.issues.create({"title": ""})
except gitlab.exceptions.GitlabCreateError as e:
    out["empty_title"] = e.response_code
try:
    project.issues.get(9999)
except gitlab.exceptions.GitlabGetError as e:
    out["missing_issue"] = [e.response_code, str(e.error_message)]

print(json.dumps(out))
