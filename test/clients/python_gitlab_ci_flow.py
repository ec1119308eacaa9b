# A CI tool's session with python-gitlab (Debian's python3-gitlab) against Labwright: project,
# group and instance CI/CD variables created, listed with get_all, read by key and by
# filter[environment_scope], edited through save(), refused when duplicated, and deleted; project
# and group deploy tokens created, listed and deleted, and one used by git to clone.
# Usage: python3 python_gitlab_ci_flow.py <url> <root-token>; prints one JSON object of
# observations (the last line of stdout).
import json
import sys
import warnings

import gitlab

url, token = sys.argv[1], sys.argv[2]
out = {}
warnings.simplefilter("error")


def step(name, fn):
    try:
        out[name] = fn()
    except gitlab.exceptions.GitlabError as e:
        out[name] = {"error": e.response_code, "message": str(e.error_message)}
    except Exception as e:  # noqa: BLE001 - reported to the test as an observation
        out[name] = {"exception": f"{type(e).__name__}: {e}"}


def shape(v):
    return {k: getattr(v, k, "<absent>") for k in ("key", "value", "variable_type", "protected", "masked", "environment_scope", "description")}


gl = gitlab.Gitlab(url, private_token=token)
gl.auth()
group = gl.groups.create({"name": "Vars Group", "path": "vars-group"})
project = gl.projects.create({"name": "vars-app", "namespace_id": group.id})

# Project variables
step("created", lambda: shape(project.variables.create({"key": "DEPLOY_KEY", "value": "s3cr3t-value", "protected": True, "masked": True})))
for i in range(25):
    project.variables.create({"key": f"BULK_{i:02d}", "value": str(i)})
step("listed", lambda: len(project.variables.list(get_all=True)))
step("first_page", lambda: [v.key for v in project.variables.list(per_page=5, page=1)])
step("got", lambda: shape(project.variables.get("DEPLOY_KEY")))


def save_value():
    v = project.variables.get("DEPLOY_KEY")
    v.value = "rotated-value"
    v.save()
    return shape(project.variables.get("DEPLOY_KEY"))


step("saved", save_value)
step("duplicate", lambda: project.variables.create({"key": "DEPLOY_KEY", "value": "x"}))
step("bad_key", lambda: project.variables.create({"key": "bad key", "value": "x"}))
step("unmaskable", lambda: project.variables.create({"key": "SHORT", "value": "abc", "masked": True}))

# Environment scopes
project.variables.create({"key": "URL", "value": "https://prod", "environment_scope": "production"})
project.variables.create({"key": "URL", "value": "https://staging", "environment_scope": "staging"})
step("ambiguous", lambda: project.variables.get("URL"))
step("by_scope", lambda: shape(project.variables.get("URL", filter={"environment_scope": "staging"})))
step("update_scoped", lambda: project.variables.update("URL", {"value": "https://staging-2"}, filter={"environment_scope": "staging"})["value"])
step("delete_scoped", lambda: project.variables.delete("URL", filter={"environment_scope": "production"}))
step("url_left", lambda: [(v.environment_scope, v.value) for v in project.variables.list(get_all=True) if v.key == "URL"])

# Group and instance variables
step("group_created", lambda: shape(group.variables.create({"key": "GROUP_TOKEN", "value": "group-secret", "variable_type": "file"})))
step("group_listed", lambda: [v.key for v in group.variables.list(get_all=True)])
step("instance_created", lambda: shape(gl.variables.create({"key": "REGISTRY", "value": "registry.local"})))
step("instance_listed", lambda: [v.key for v in gl.variables.list(get_all=True)])


def delete_all():
    project.variables.delete("DEPLOY_KEY")
    group.variables.delete("GROUP_TOKEN")
    gl.variables.delete("REGISTRY")
    return [len(project.variables.list(get_all=True)), len(group.variables.list(get_all=True)), len(gl.variables.list(get_all=True))]


step("after_delete", delete_all)
step("missing", lambda: project.variables.get("DEPLOY_KEY"))

# Deploy tokens
project.files.create({"file_path": "README.md", "branch": "main", "content": "# vars-app\n", "commit_message": "Add README"})
step("dt_created", lambda: (lambda t: {"name": t.name, "username": t.username, "scopes": t.scopes, "has_token": t.token.startswith("gldt-")})(
    project.deploytokens.create({"name": "ci-clone", "scopes": ["read_repository"], "expires_at": "2099-12-31"})))
dt = project.deploytokens.list()[0]
step("dt_listed", lambda: [(t.name, t.expires_at, t.revoked, t.expired) for t in project.deploytokens.list()])
step("dt_get", lambda: project.deploytokens.get(dt.id).name)
gdt = group.deploytokens.create({"name": "group-ci", "scopes": ["read_repository", "read_registry"], "username": "group-ci-bot"})
step("group_dt", lambda: [(t.username, t.scopes) for t in group.deploytokens.list()])
step("instance_dt", lambda: sorted(t.name for t in gl.deploytokens.list(get_all=True)))
out["dt_credentials"] = {"username": gdt.username, "token": gdt.token, "path": project.path_with_namespace}
step("dt_bad_scope", lambda: project.deploytokens.create({"name": "x", "scopes": ["write_repository"]}))


def delete_dt():
    dt.delete()
    return [t.name for t in project.deploytokens.list()]


step("dt_after_delete", delete_dt)
print(json.dumps(out))
