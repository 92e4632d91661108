"""Write gptembed/data/pydoc_topics.txt, the text the book's small GPT is trained on.

Run with Python 3.13.0, the version whose text is stored:

    ~/.pyenv/versions/3.13.0/bin/python tools/make_corpus.py

CPython ships the English prose of its language reference as ``pydoc_data.topics`` (what
``help("assert")`` shows), under the PSF licence (gptembed/data/LICENSE-PSF.txt). The text
changes between Python versions (458,917 characters on 3.10.13, 510,586 on 3.13.0), so the book
stores one version's and never reads the running Python's. The file holds the 79 topics in the
order of their names, joined by a form feed (U+000C, which no topic contains): the corpus's
end-of-text mark between documents.
"""

from __future__ import annotations

import hashlib
import pydoc_data.topics
import sys
from pathlib import Path

SEPARATOR = "\f"
OUT = Path(__file__).resolve().parent.parent / "gptembed" / "data" / "pydoc_topics.txt"


def main() -> None:
    if sys.version_info[:3] != (3, 13, 0):
        sys.exit(f"run this with Python 3.13.0 (the stored text's version), not {sys.version}")
    topics = pydoc_data.topics.topics
    documents = [topics[name] for name in sorted(topics)]
    assert not any(SEPARATOR in doc for doc in documents)
    data = SEPARATOR.join(documents).encode("utf-8")
    OUT.write_bytes(data)
    print(f"{OUT}: {len(documents)} topics, {len(data):,} bytes")
    print(f"sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
