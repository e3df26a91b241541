"""onnxruntime's numerics on Armv7E-M DSP cores (`--numerics onnxruntime` on a target whose
kernels include cortex_m_dsp): the DSP kernels' SMLAD sums (runtime_c/kiln_dsp.h) with
onnxruntime's float requantization (runtime_c/kiln_ort.h). The compiler puts this variant
before the portable onnxruntime one there (codegen/compiler.py); a kernel it lacks falls to
the portable onnxruntime kernel. Bit-exact with those: the integer sums are exact in both."""

VARIANT = "onnxruntime_dsp"
