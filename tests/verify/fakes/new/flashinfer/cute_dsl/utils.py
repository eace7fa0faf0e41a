def is_cute_dsl_arch_supported(major, minor):
    return major in (10, 11)
