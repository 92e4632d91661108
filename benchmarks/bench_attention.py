"""Peak memory of one head's attention probabilities: the formula against numpy's measurement.

Run by hand (not part of pytest): ``python benchmarks/bench_attention.py``. For each length ``n``
it prints the formula's ``n^2 * 4`` bytes (float32, one head), the peak that tracemalloc measures
for :func:`gptembed.attention_probs` (in place: the scores are the one full-size array) and for
:func:`gptembed.naive_attention_probs` (a new array per step), and each peak / formula.
"""

from __future__ import annotations

import numpy as np

from gptembed import attention_scores_bytes, measure_attention_scores_peak

LENGTHS = (256, 512, 1024, 2048, 4096)
DTYPE = np.float32


def main() -> None:
    itemsize = np.dtype(DTYPE).itemsize
    print(f"One head, head_dim 64, {np.dtype(DTYPE).name}; numpy {np.__version__}; bytes in KiB\n")
    header = ["n", "formula", "in-place", "in-place/formula", "naive", "naive/formula"]
    rows = []
    for n in LENGTHS:
        formula = attention_scores_bytes(n, n_heads=1, bytes_per_element=itemsize)
        in_place = measure_attention_scores_peak(n, dtype=DTYPE)
        naive = measure_attention_scores_peak(n, dtype=DTYPE, naive=True)
        rows.append(
            [str(n)]
            + [f"{b / 1024:,.0f}" for b in (formula, in_place)]
            + [f"{in_place / formula:.3f}", f"{naive / 1024:,.0f}", f"{naive / formula:.3f}"]
        )
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |")
    print(
        "\nThe naive version keeps three (n, n) arrays alive at once (the scores, exp(scores - max)"
        "\nand the normalised result): about 3x the formula."
    )


if __name__ == "__main__":
    main()
