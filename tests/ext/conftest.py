"""The sites under roots/ are sources that the tests build, not tests: with `--nbval` (as
`./dev test` runs) pytest would otherwise collect their stored notebooks and run them."""

collect_ignore = ["roots"]
