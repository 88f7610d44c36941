"""What a load asks for: one frozen object that the CLI, the prompt hook, MCP and the review page
build the same way, instead of a long list of keyword flags that each re-derives."""

from __future__ import annotations

from collections.abc import Iterable

from engram.core.errors import UsageError

DISCLOSURES = ("auto", "cards", "bodies")
MAX_QUERIES = 5
MAX_QUERY_CHARS = 200


class LoadRequest:
    """One load. Either `ids` (those memories' bodies, nothing routed) or a task: `query`,
    and/or the work's signals (`paths` it touches, its `branch`); neither is the session-start
    pack.

    - `budget_tokens`, `limit` (or `all_`), `disclosure` shape the pack; `full` renders whole
      files; `roles` narrows what is visible.
    - `queries`: up to five short searches the host's model wrote for the task (the words a
      memory about it would use); each is routed on its own and the rankings are fused, so
      the model's judgement of what the task needs does the recall.
    - `explain` adds why each memory was chosen; `dry_run` lists the pack and counts nothing;
      `count_usage=False` counts nothing either (hooks and previews).
    - `objective`: working notes with this objective render as bodies (others as cards).
    - `max_bodies` caps confident bodies (a hook's noise budget); `thin_cards=False` drops
      the cards of a task with at most one meaningful word; `cards=False` drops every card
      (the prompt hook speaks only when it is sure; the ids it dropped are in the data).
    - `min_matched`: a body needs this many distinct words of the task matched (or, for a
      task of fewer words, its word named by the memory's title, tags or id as written, or
      a trigger a person wrote): the prompt hook asks 2, since one word a raw prompt shares
      with memory ("continue", "good morning") is not evidence that it applies.
    """

    __slots__ = (
        "all_",
        "branch",
        "budget_tokens",
        "cards",
        "count_usage",
        "disclosure",
        "dry_run",
        "explain",
        "full",
        "ids",
        "limit",
        "max_bodies",
        "min_matched",
        "objective",
        "paths",
        "queries",
        "query",
        "roles",
        "thin_cards",
    )  # fmt: skip
    query: str | None
    queries: tuple[str, ...]
    ids: tuple[str, ...]
    budget_tokens: int | None
    disclosure: str
    full: bool
    explain: bool
    all_: bool
    dry_run: bool
    roles: tuple[str, ...] | None
    limit: int | None
    objective: str | None
    count_usage: bool
    max_bodies: int | None
    min_matched: int
    thin_cards: bool
    cards: bool
    paths: tuple[str, ...]
    branch: str

    def __init__(
        self,
        *,
        query: str | None = None,
        queries: Iterable[str] = (),
        ids: Iterable[str] | None = (),
        budget_tokens: int | None = None,
        disclosure: str = "auto",
        full: bool = False,
        explain: bool = False,
        all_: bool = False,
        dry_run: bool = False,
        roles: Iterable[str] | None = None,
        limit: int | None = None,
        objective: str | None = None,
        count_usage: bool = True,
        max_bodies: int | None = None,
        min_matched: int = 1,
        thin_cards: bool = True,
        cards: bool = True,
        paths: Iterable[str] | None = (),
        branch: str = "",
    ) -> None:
        # A plain class rather than a dataclass: `dataclasses` costs a cold start ~9 ms.
        values = dict(locals())
        del values["self"]
        for name, value in values.items():
            object.__setattr__(self, name, value)
        if self.disclosure not in DISCLOSURES:
            raise UsageError(
                f"invalid disclosure {self.disclosure!r}: expected one of {', '.join(DISCLOSURES)}"
            )
        # Lists are welcome from callers; the request keeps tuples so it stays immutable.
        for name in ("ids", "paths", "queries"):
            object.__setattr__(self, name, tuple(getattr(self, name) or ()))
        if self.roles is not None:
            object.__setattr__(self, "roles", tuple(self.roles))

        queries = tuple(q.strip() if isinstance(q, str) else q for q in self.queries)
        if len(queries) > MAX_QUERIES:
            raise UsageError(f"{len(queries)} queries: at most {MAX_QUERIES} searches per load")
        for n, q in enumerate(queries):
            if not isinstance(q, str) or not q:
                raise UsageError(f"queries[{n}] is empty: each search is a few words")
            if len(q) > MAX_QUERY_CHARS:
                raise UsageError(
                    f"queries[{n}] has {len(q)} characters: at most {MAX_QUERY_CHARS} per search"
                )
        object.__setattr__(self, "queries", queries)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a LoadRequest is frozen: make a new one instead of setting {name}")

    def __repr__(self) -> str:
        return "LoadRequest(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"

    @property
    def counts(self) -> bool:
        """Whether this load counts as a retrieval of the bodies it shows."""
        return self.count_usage and not self.dry_run and not self.explain
