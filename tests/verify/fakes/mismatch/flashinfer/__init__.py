"""A fake flashinfer 0.6.17 whose import fails the way flashinfer/jit/env.py does when
flashinfer-cubin is a different version (not flashinfer code)."""
raise RuntimeError(
    "flashinfer-cubin version (0.6.16.post4) does not match flashinfer version (0.6.17). "
    "Please install the same version of both packages. "
    "Set FLASHINFER_DISABLE_VERSION_CHECK=1 to bypass this check."
)
