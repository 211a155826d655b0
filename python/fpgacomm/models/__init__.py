"""Performance models: each a small class with named parameters, `predict`,
`fit(result)` and `compare(result)` (models/base.py has the interface).

`registry()` maps the names the command line uses (`fpgacomm fit --model`,
`fpgacomm model NAME`) to the modules that implement them.
"""
