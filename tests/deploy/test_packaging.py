"""deploy/Dockerfile and LICENSE (issue 13, packaging), checked without docker: the Dockerfile is
parsed, and its runtime stage must be one a shell-less, package-manager-less image can build and run.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
#: md5 of https://www.apache.org/licenses/LICENSE-2.0.txt.
APACHE_2_MD5 = "3b83ef96387f14655fc854ddc3c6bd57"
#: Images known to ship no shell and no package manager.
SHELL_LESS = re.compile(r"^gcr\.io/distroless/python3-debian\d+(:nonroot)?(@sha256:[0-9a-f]{64})?$")


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, args = full.partition(" ")
        out.append((keyword.upper(), args.strip()))
    assert not pending, "a continuation at the end of the file"
    return out


def _stages() -> list[Stage]:
    stages: list[Stage] = []
    for keyword, args in _instructions(DOCKERFILE.read_text()):
        if keyword == "FROM":
            parts = args.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(parts[0], name))
        else:
            assert stages, f"{keyword} before the first FROM"
            stages[-1].instructions.append((keyword, args))
    return stages


def _todo_digest_names() -> str:
    """The TODO(digest) comment: an image not pinned yet must be named there."""
    text = DOCKERFILE.read_text()
    block = re.search(r"# TODO\(digest\):(.*?)(?:\n#\s*\n|\n[^#])", text, re.S)
    return block.group(1) if block else ""


def test_base_images_are_pinned_or_named_in_the_todo() -> None:
    todo = _todo_digest_names()
    for stage in _stages():
        if stage.image in {s.name for s in _stages()}:
            continue  # FROM an earlier stage
        pinned = re.search(r"@sha256:[0-9a-f]{64}$", stage.image)
        tag = stage.image.split("@")[0]
        assert pinned or tag in todo, f"{stage.image}: pin it by digest (or name it in the TODO(digest) comment)"
        assert ":" in tag.rsplit("/", 1)[-1] and not tag.endswith(":latest"), f"{stage.image}: an explicit tag"


def test_runtime_stage_has_no_shell_and_runs_as_non_root() -> None:
    runtime = _stages()[-1]
    assert SHELL_LESS.match(runtime.image), runtime.image
    keywords = [k for k, _ in runtime.instructions]
    # Shell-form RUN needs /bin/sh, which the image does not have; nothing is installed here.
    assert "RUN" not in keywords, runtime.instructions
    for keyword, args in runtime.instructions:
        if keyword in ("ENTRYPOINT", "CMD"):
            argv = json.loads(args)  # exec form: no shell between the runtime and kubesched
            assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    [user] = [a for k, a in runtime.instructions if k == "USER"]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and (not gid or int(gid) != 0), user
    [entrypoint] = [json.loads(a) for k, a in runtime.instructions if k == "ENTRYPOINT"]
    # The venv copied from the build stage, whose interpreter path the runtime image provides.
    assert entrypoint[0].startswith("/opt/kubesched/bin/")
    copies = [a for k, a in runtime.instructions if k == "COPY"]
    assert any(a.startswith("--from=build ") and "/opt/kubesched" in a for a in copies), copies


def test_runtime_serves_what_the_deployment_probes() -> None:
    runtime = _stages()[-1]
    [exposed] = [a for k, a in runtime.instructions if k == "EXPOSE"]
    deployment = yaml.safe_load((ROOT / "deploy" / "deployment.yaml").read_text())
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert [str(p["containerPort"]) for p in container["ports"]] == [exposed]
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(
        next(a for k, a in runtime.instructions if k == "USER").split(":")[0]
    )


def test_build_and_runtime_use_the_same_debian_python() -> None:
    build, runtime = _stages()[0], _stages()[-1]
    build_debian = re.match(r"debian:(\d+)", build.image)
    runtime_debian = re.search(r"python3-debian(\d+)", runtime.image)
    assert build_debian and runtime_debian and build_debian.group(1) == runtime_debian.group(1)
    runs = " ".join(a for k, a in build.instructions if k == "RUN")
    assert "python3-venv" in runs and "pip uninstall -y pip" in runs


def test_derived_image_instructions_are_documented() -> None:
    text = DOCKERFILE.read_text()
    assert "kubesched.plugins" in text and "FROM kubesched:dev" in text


def test_license_is_apache_2_as_pyproject_says() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.md5(text).hexdigest() == APACHE_2_MD5
    assert b"Apache License" in text and b"Version 2.0, January 2004" in text


def test_kustomization_is_the_default_role_only() -> None:
    kustomization = yaml.safe_load((ROOT / "deploy" / "kustomization.yaml").read_text())
    assert "rbac.yaml" in kustomization["resources"]
    assert "rbac-pod-annotations.yaml" not in kustomization["resources"], "the pod-annotations role is opt-in"
