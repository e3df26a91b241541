"""ONNX TfIdfVectorizer's n-gram pool as the flattened trie of Kiln's TfIdfVectorizer op.

The pool lists the 1-grams, then the 2-grams..., sections starting at `ngram_counts`; n-gram
number j of the whole pool (counting the sections outside min..max_gram_length too) is
counted at output coordinate ngram_indexes[j]. As in ONNX's reference, only the sections of
min..max_gram_length enter the trie, and a repeated n-gram keeps its last coordinate.
"""

from __future__ import annotations


def pool_trie(pool: list[int], ngram_counts: list[int], ngram_indexes: list[int], min_gram: int,
              max_gram: int, error) -> dict:
    """Kiln TfIdfVectorizer attributes child_begin, keys and slots; `error(text)` makes the
    KilnError for an inconsistent pool."""
    root: dict[int, list] = {}  # token -> [slot, children]
    gram = 0
    for size, start in enumerate(ngram_counts, start=1):
        end = ngram_counts[size] if size < len(ngram_counts) else len(pool)
        if not 0 <= start <= end <= len(pool):
            raise error("ngram_counts must rise within the pool")
        grams = (end - start) // size
        if min_gram <= size <= max_gram:
            for j in range(grams):
                level = root
                tokens = pool[start + j * size:start + (j + 1) * size]
                for depth, token in enumerate(tokens, start=1):
                    entry = level.setdefault(token, [-1, {}])
                    if depth == size:
                        if gram + j >= len(ngram_indexes):
                            raise error(f"ngram_indexes has no coordinate for n-gram {gram + j}")
                        entry[0] = ngram_indexes[gram + j]
                    level = entry[1]
        gram += grams
    child_begin, keys, slots = [0], [], [-1]
    queue = [root]  # breadth first: each node's children get consecutive numbers
    for children in queue:
        for token in sorted(children):
            keys.append(token)
            slots.append(children[token][0])
            queue.append(children[token][1])
        child_begin.append(len(keys))
    return {"child_begin": tuple(child_begin), "keys": tuple(keys), "slots": tuple(slots)}
