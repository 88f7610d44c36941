"""What the work touches, from git, without running anything the repository can configure.

`git status` in the project's own repository reads the repository's config, and that config
(however spelled: `[FILTER "x"]`, `[filter.x]`, `include.path`, `includeIf`, `core.fsmonitor`,
…) can name programs git then runs: a clean filter to compare a file, an fsmonitor hook.
A cloned, unpacked or tampered repository is not the person's choice, so git is never run
on it as it is. Engram builds a private git directory instead: a config of its own, the
repository's HEAD commit as a ref, its objects through `objects/info/alternates` and its
index through `GIT_INDEX_FILE`, and runs `git status` on the work tree with that. Git then
reads no config of the repository and no `info/attributes`; the person's own user config
(git-lfs and other filters they installed) still applies.

Every file of the repository read here is opened without blocking and checked to be a
regular file of bounded size first (a FIFO at `.git/HEAD` must not hang a hook), and git
runs with a time limit.
"""

from __future__ import annotations

import os
import stat

GIT_TIMEOUT_S = 2.0
MAX_GIT_OUTPUT = 4 * 1024 * 1024  # a status listing larger than this says nothing useful
MAX_SMALL_FILE = 64 * 1024  # HEAD, a ref, `gitdir:` and `commondir` files
MAX_PACKED_REFS = 32 * 1024 * 1024
_HEX = frozenset("0123456789abcdef")


def read_regular(path: str, limit: int) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes; None for anything else (absent,
    a FIFO, a device, a folder, too large). Opened non-blocking, so a FIFO never waits."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _text(path: str) -> str | None:
    raw = read_regular(path, MAX_SMALL_FILE)
    return raw.decode("utf-8", "replace").strip() if raw is not None else None


def find_top(project_dir: str) -> str | None:
    """The folder holding `.git` (a folder, or the file of a worktree or submodule) at or
    above the project, None when there is none."""
    folder = os.path.abspath(project_dir)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def git_dirs(top: str) -> tuple[str, str] | None:
    """(git dir, common dir) of the repository whose work tree is `top`."""
    dot = os.path.join(top, ".git")
    try:
        info = os.stat(dot)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        gitdir = dot
    elif stat.S_ISREG(info.st_mode):
        line = _text(dot)
        if not line or not line.startswith("gitdir:"):
            return None
        gitdir = os.path.normpath(os.path.join(top, line[7:].strip()))
    else:
        return None
    common = _text(os.path.join(gitdir, "commondir"))
    commondir = os.path.normpath(os.path.join(gitdir, common)) if common else gitdir
    return gitdir, commondir


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def head_of(gitdir: str, commondir: str) -> tuple[str, str | None] | None:
    """(branch or "" when detached, commit id or None on an unborn branch)."""
    head = _text(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    if _is_sha(head):
        return "", head
    if not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    if not ref.startswith("refs/") or ".." in ref.split("/") or "\x00" in ref:
        return None
    branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else ""
    loose = _text(os.path.join(commondir, *ref.split("/")))
    if loose and _is_sha(loose):
        return branch, loose
    packed = read_regular(os.path.join(commondir, "packed-refs"), MAX_PACKED_REFS)
    if packed:
        wanted = b" " + ref.encode() + b"\n"
        at = (packed + b"\n").find(wanted)
        if at >= 0:
            start = packed.rfind(b"\n", 0, at) + 1
            sha = packed[start:at].decode("ascii", "replace")
            if _is_sha(sha):
                return branch, sha
    return branch, None


class Shadow:
    """A private git directory for one `git status`, removed when the block ends."""

    def __init__(self, commondir: str, branch: str, commit: str | None) -> None:
        self.commondir, self.branch, self.commit = commondir, branch, commit
        self.path = ""
        self._made: list[str] = []

    def __enter__(self) -> str:
        base = os.path.abspath(os.environ.get("TMPDIR") or "/tmp")
        for _ in range(8):
            path = os.path.join(base, "engram-git-" + os.urandom(8).hex())
            try:
                os.mkdir(path, 0o700)
                break
            except FileExistsError:
                continue
        else:
            raise OSError("no private folder for git")
        self.path = path
        sha256 = self.commit is not None and len(self.commit) == 64
        config = f"[core]\n\trepositoryformatversion = {1 if sha256 else 0}\n\tbare = false\n"
        config += "\tfsmonitor = false\n\thooksPath = /dev/null\n"
        if sha256:
            config += "[extensions]\n\tobjectformat = sha256\n"
        ref = f"refs/heads/{self.branch or 'engram-detached'}"
        self._dir("objects")
        self._dir("objects/info")
        self._dir("refs")
        self._dir("refs/heads")
        folders = ref.split("/")[2:-1]
        for depth in range(len(folders)):
            self._dir("refs/heads/" + "/".join(folders[: depth + 1]))
        self._file("config", config)
        self._file("HEAD", f"ref: {ref}\n")
        self._file("objects/info/alternates", os.path.join(self.commondir, "objects") + "\n")
        if self.commit:
            self._file(ref, self.commit + "\n")
        return path

    def _dir(self, rel: str) -> None:
        os.mkdir(os.path.join(self.path, rel), 0o700)
        self._made.append(rel + "/")

    def _file(self, rel: str, text: str) -> None:
        fd = os.open(os.path.join(self.path, rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        self._made.append(rel)

    def __exit__(self, *exc: object) -> None:
        for rel in [*reversed(self._made), ""]:
            path = os.path.join(self.path, rel)
            try:
                os.rmdir(path) if rel.endswith("/") or not rel else os.unlink(path)
            except OSError:
                continue


def run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, bytes] | None:
    """(exit code, stdout) of a short command, stderr discarded; None when it cannot run or
    takes longer than `timeout` (it is killed). Started with posix_spawn where there is
    one: importing `subprocess` would cost a hook more than git itself in a small project."""
    if not hasattr(os, "posix_spawnp"):
        import subprocess

        try:
            proc = subprocess.run(
                argv,
                env=env,
                capture_output=True,
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.returncode, proc.stdout
    import select
    import time

    read_end, write_end = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, null, 0),
                (os.POSIX_SPAWN_DUP2, write_end, 1),
                (os.POSIX_SPAWN_DUP2, null, 2),
            ],
        )
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)
        os.close(null)
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, 9)  # too slow: the caller answers without git's view
                os.waitpid(pid, 0)
                return None
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            size += len(chunk)
            if size <= MAX_GIT_OUTPUT:
                chunks.append(chunk)
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks)


# What git must not take from the environment of the person's shell either: a repository
# named by variables would be used as is, bypassing the private directory.
_REPOSITORY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


def changed_files(project_dir: str, exclude: str) -> tuple[list[str], str] | None:
    """(changed and staged files relative to the project, branch), or None when git cannot
    tell (no repository, no git, a time-out). `exclude` is a project-relative folder left out
    of the walk (the memory root)."""
    top = find_top(project_dir)
    if top is None:
        return None
    dirs = git_dirs(top)
    if dirs is None:
        return None
    gitdir, commondir = dirs
    head = head_of(gitdir, commondir)
    index = os.path.join(gitdir, "index")
    if head is None:
        return None
    branch, commit = head
    if os.path.lexists(index) and read_regular_size(index) is None:
        return None  # a FIFO or a device where the index should be
    alternates = os.path.join(commondir, "objects", "info", "alternates")
    if os.path.lexists(alternates) and read_regular_size(alternates) is None:
        return None
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_VARIABLES}
    env.update({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"})
    env["GIT_INDEX_FILE"] = index
    with Shadow(commondir, branch, commit) as shadow:
        argv = ["git", "--git-dir", shadow, "--work-tree", top, "-C", project_dir]
        argv += ["status", "--porcelain=v1", "--untracked-files=no", "--ignore-submodules=all"]
        argv += ["-z", "--", ".", f":(exclude){exclude}"]
        done = run(argv, env, GIT_TIMEOUT_S)
    if done is None or done[0] != 0:
        return None
    prefix = os.path.relpath(os.path.abspath(project_dir), top)
    prefix = "" if prefix == os.curdir else prefix.replace(os.sep, "/") + "/"
    paths = []
    skip = False
    for entry in done[1].decode("utf-8", "replace").split("\x00"):
        if skip:  # the original name of a rename or copy
            skip = False
            continue
        name = entry[3:]
        if len(entry) > 3 and name.startswith(prefix):
            paths.append(name[len(prefix) :])
        skip = len(entry) > 3 and entry[0] in "RC"
    return paths, branch


def read_regular_size(path: str) -> int | None:
    """The size of a regular file (None for anything else), without opening it."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None
