"""Several compiled graphs in one library: shape variants of one model (`--variant`), several
models in one firmware (`kiln build A B ...`) and a model compiled once for the largest extent
of a bounded dimension (`--max-shape`). Each graph goes through the ordinary pipeline
(codegen/compiler.py); this package puts the results together: one arena, constants shared,
a dispatcher, the extent wrapper, build glue and manifest.

spec.py       --variant text -> VariantSpec (input shapes and specialised values)
library.py    members rendered against one arena and, for variants, one copy of each constant
build.py      compile_variants, compile_models: the library's files and manifest
chain.py      several models run one after another in one image (kiln verify A B)
kernels.py    kernels the variants share, defined once (N_kernels.c)
bounded_axis.py, bounded.py   --max-shape: soundness analysis and the extent build
tflite_extent.py   --max-shape and variants of a TFLite model: its open dimensions, its reference
measured.py   kiln profile --write-manifest: the counts in the library's manifest
commands.py   the kiln subcommands on a library
"""
