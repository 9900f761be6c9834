"""Optional: a language model writes extra connective families for one split, in the grammar notation.

    paraphrase(catalogue_dir, split="dev", kind="cancel", model="openai/...", n=2)

The prompt names the connective kind, its placeholders, the notation and the heads the split
already has (only that split's heads: no other split's wording is sent). The reply is a JSON list
of ``{head, frames}`` families. Replies are cached by the content hash of (model, prompt) in
``cache_dir``, so the same request never calls the model twice. Each proposed family is added to
``grammar/<split>/connectives.yaml`` as ``llm_<hash>_<i>`` only if the catalogue still loads with it
(the loader's disjointness, placeholder and value rules decide); its id then appears in every
scenario's ``families`` that draws from it. Offline the grammar alone is enough: nothing here runs
unless it is asked for. ``complete`` replaces the model call (tests).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any, Callable

import yaml

from simulator.catalogue import SPLITS, CatalogueError, load_catalogue
from simulator.atomic import atomic_write

__all__ = ["ParaphraseError", "paraphrase"]

NOTATION = (
    "Write each family as a JSON object {\"head\": ..., \"frames\": [...]}. The head is the word or fixed phrase "
    "that carries the family's meaning; every frame says it. In a frame, (a|b|c) is a choice, (a|b|) an optional "
    "part, groups nest; {placeholder} is filled in later and must appear exactly as given. Write spoken, casual "
    "English: contractions, hedges, fillers, politeness, questions and statements."
)


class ParaphraseError(ValueError):
    """The request cannot be served (unknown split or kind, a reply that is not the asked JSON)."""


def _prompt(kind: str, placeholders: list[str], heads: list[str], n: int) -> str:
    ph = ", ".join("{" + p + "}" for p in placeholders) or "none"
    return (
        f"Write {n} new families of things a user says to a voice assistant for the connective '{kind}'. "
        f"Placeholders every frame must contain: {ph}. Do not use these heads: {', '.join(heads) or 'none'}. "
        f"{NOTATION} Reply with only a JSON list of families."
    )


def _litellm_complete(model: str, api_base: str | None) -> Callable[[str], str]:
    def call(prompt: str) -> str:
        import litellm  # optional dependency (the `models` extra)

        kwargs: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0.7}
        if api_base:
            kwargs["api_base"] = api_base
        resp = litellm.completion(**kwargs)
        return str(resp.choices[0].message.content or "")

    return call


def _families_of(reply: str) -> list[dict[str, Any]]:
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1]
    try:
        data = json.loads(text[text.find("[") : text.rfind("]") + 1])
    except ValueError as err:
        raise ParaphraseError(f"the model's reply is not a JSON list of families: {err}") from None
    out = []
    for fam in data if isinstance(data, list) else []:
        if isinstance(fam, dict) and isinstance(fam.get("head"), str) and isinstance(fam.get("frames"), list):
            frames = [f for f in fam["frames"] if isinstance(f, str) and f.strip()]
            if fam["head"].strip() and frames:
                out.append({"head": fam["head"].strip(), "frames": frames})
    return out


def paraphrase(
    catalogue_dir: str | Path,
    *,
    split: str,
    kind: str,
    model: str,
    n: int = 2,
    cache_dir: str | Path | None = None,
    api_base: str | None = None,
    complete: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Ask the model for ``n`` families of ``kind`` in ``split``; keep those the loader accepts.

    Returns ``{"added": [family ids], "refused": [(head, reason)], "cached": bool}``.
    """
    root = Path(catalogue_dir)
    if split not in SPLITS:
        raise ParaphraseError(f"split: unknown split {split!r} (known: {', '.join(SPLITS)})")
    cat = load_catalogue(root)
    if kind not in cat.phrases:
        raise ParaphraseError(f"kind: unknown connective kind {kind!r}")
    path = root / "grammar" / split / "connectives.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    fams = data["connectives"][kind]
    placeholders = sorted({p for f in cat.phrases[kind][split] for t in f.templates[:1] for p in _slots(t)})
    prompt = _prompt(kind, placeholders, sorted({f["head"] for f in fams.values()}), n)
    digest = hashlib.sha256(json.dumps([model, prompt]).encode()).hexdigest()
    cache = Path(cache_dir) if cache_dir else root / ".paraphrase_cache"
    cache.mkdir(parents=True, exist_ok=True)
    hit = cache / f"{digest}.json"
    cached = hit.is_file()
    if cached:
        reply = json.loads(hit.read_text(encoding="utf-8"))["reply"]
    else:
        reply = (complete or _litellm_complete(model, api_base))(prompt)
        atomic_write(hit, json.dumps({"model": model, "prompt": prompt, "reply": reply}, indent=2))
    added, refused = [], []
    for i, fam in enumerate(_families_of(reply)):
        fid = f"llm_{digest[:8]}_{i}"
        if fid in fams:
            continue
        trial = dict(data, connectives={**data["connectives"], kind: {**fams, fid: fam}})
        with tempfile.TemporaryDirectory() as tmp:
            import shutil

            copy = Path(tmp) / "catalogue"
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".paraphrase_cache"))
            (copy / "grammar" / split / "connectives.yaml").write_text(yaml.safe_dump(trial, sort_keys=False, allow_unicode=True), encoding="utf-8")
            try:
                load_catalogue(copy)
            except CatalogueError as err:
                refused.append((fam["head"], str(err).split(": ", 2)[-1]))
                continue
        fams[fid] = fam
        data["connectives"][kind] = fams
        added.append(f"{kind}/{split}/{fid}")
    if added:
        atomic_write(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=200))
    return {"added": added, "refused": refused, "cached": cached}


def _slots(template: str) -> list[str]:
    import re

    return re.findall(r"\{([a-z_]+)\}", template)
