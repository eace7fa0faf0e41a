"""Dependency pins: one reader per pin-file format, and discovery of the files that govern a launch.

- ``model``: ``Pin`` / ``PinProblem`` / ``PinSource``, what every reader returns.
- manifest readers: ``requirements``, ``pyproject``, ``pipfile``, ``conda_env``, ``install_cmds``
  (Dockerfile / shell ``pip install``).
- ``locks``: uv.lock, poetry.lock, pdm.lock, Pipfile.lock, pylock.toml, conda-lock.yml.
- ``discovery``: ``pin_format``, ``read_pin_file`` (cached per workspace), ``discover`` (the
  projects from a launch file up to the repository root), ``governed_roots``, ``manifest_for_lock``.

Submodules are imported where used, so that importing one reader does not import the others.
"""
