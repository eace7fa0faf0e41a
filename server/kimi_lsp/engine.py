"""The one lint engine behind ``kimi-lsp --check`` and the language server.

``Engine.lint_file(path)`` reads the file through the workspace (editor buffers first), finds its
launches, merges each with its ``--config`` file and the schema of the sglang release it runs
(``release.resolve_release``: setting, image, pip lines, lock, manifests), runs the rules, then
applies settings and suppressions. A launch whose release is unknown is checked against the recent
releases and keeps only what all of them report, as warnings that say so; schema diagnostics of a
known release name it and its evidence. Nothing here prints or exits.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from kimi_lsp import suppression
from kimi_lsp._record import dataclass, field, replace
from kimi_lsp.config import Settings, find_config_file, load_settings
from kimi_lsp.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Related, Severity
from kimi_lsp.knowledge.schema import Schema, load_schema, load_schema_exact, shipped_versions
from kimi_lsp.launch import ResolvedLaunch, resolve, resolve_config_path
from kimi_lsp.rules import ALL_RULES, BY_CODE, LAUNCH_RULES
from kimi_lsp.rules._base import LaunchContext, Rule, Violation, unvetted
from kimi_lsp.surfaces import read_surface
from kimi_lsp.surfaces.model import ConfigFile, Entry, LaunchCommand, Surface, SurfaceResult
from kimi_lsp.text import Span
from kimi_lsp.walk import DOC_SUFFIXES, LAUNCH_SUFFIXES, looks_like_launch_candidate  # re-exported: the file-name question lives below the engine
from kimi_lsp.workspace import ReadFailure, SourceText, Workspace, touched

TYPE_CHECKING = False  # typing is not imported at run time (start-up: see _record.py)
if TYPE_CHECKING:
    import logging

    from kimi_lsp.pins.discovery import Governing
    from kimi_lsp.pins.model import PinSource
    from kimi_lsp.release import ReleaseResolution


def _log() -> logging.Logger:  # logging and traceback cost ~10 ms at start-up; only failures need them
    import logging

    return logging.getLogger("kimi_lsp.engine")


MAX_LAUNCHES_PER_FILE = 200  # each costs ~5-10 ms to check; past this, one warning says the rest were not


@dataclass
class FileResult:
    path: Path
    diagnostics: list[Diagnostic]
    launches: int = 0
    is_launch_file: bool = False
    # files this result depends on besides the file itself (pin files, --config YAML, config.json)
    depends_on: set[Path] = field(default_factory=set)


class Engine:
    def __init__(
        self,
        workspace: Workspace,
        *,
        settings: Settings | None = None,
        overrides: dict[str, object] | None = None,
        overrides_win: bool = True,
        rules: Iterable[Rule] | None = None,
    ) -> None:
        """``overrides`` are settings from the command line or the editor. They apply over a
        project configuration file when ``overrides_win`` (the CLI's flags always do); otherwise
        only where the project has none (an editor's settings yield to the project's)."""
        self.workspace = workspace
        self._fixed_settings = settings
        self._overrides = overrides or {}
        self._overrides_win = overrides_win
        self._rules = tuple(rules) if rules is not None else LAUNCH_RULES
        self._settings_cache: dict[str, Settings] = {}  # by directory name (settings_for)
        # one Settings per configuration file (None: none found), shared by its directories: the
        # enabled rules are worked out once per Settings object, not once per directory
        self._settings_by_file: dict[Path | None, Settings] = {}
        self._config_cache: dict[Path, tuple[ConfigFile | None, SurfaceResult | None]] = {}
        self._surface_cache: dict[Path, tuple[SourceText, SurfaceResult]] = {}
        self._read_by: dict[Path, set[Path]] = {}  # a file a reader read -> the files read through it
        self._rules_for: dict[int, tuple[Settings, tuple[Rule, ...]]] = {}  # id(settings) -> enabled rules
        # config files referenced by a launch elsewhere: linted through their referrers only
        self.referenced_configs: set[Path] = set()
        self.errors: list[str] = []  # internal errors (a rule raised): reported, never fatal

    # -- settings ------------------------------------------------------------------------
    def settings_for(self, path: Path) -> Settings:
        if self._fixed_settings is not None:
            return self._fixed_settings
        # keyed by the directory's name: a Path made for the parent of every file, and hashed,
        # cost more than the lookup (asked for every file a run lints)
        key = os.path.dirname(os.fspath(path))
        hit = self._settings_cache.get(key)
        if hit is None:
            d = path.parent
            root = self.workspace.repo_root(d, None)
            cfg = find_config_file(d, self.workspace, stop=root)
            shared = self._settings_by_file.get(cfg)
            if shared is None:
                overrides = self._overrides if (cfg is None or self._overrides_win) else None
                shared = self._settings_by_file[cfg] = load_settings(cfg, self.workspace, overrides or None)
            hit = self._settings_cache[key] = shared
        return hit

    def _resolve(self, path: Path) -> Path:
        """Absolute, symlinks resolved (directories' resolutions are the workspace's to remember);
        a symlink loop stays as written (reading it then fails cleanly)."""
        touched(path)
        try:
            return self.workspace.resolve(path)
        except (RuntimeError, OSError):
            return Path(os.path.abspath(path))

    def invalidate(self, path: Path | None = None) -> None:
        """Forget what was read from ``path`` (or everything). Settings and ``--config`` caches
        are dropped only when the file can be one of those."""
        from kimi_lsp.pins import discovery

        self.workspace.invalidate(path)
        self._rules_for.clear()
        if path is None:
            self._settings_cache.clear()
            self._settings_by_file.clear()
            self._config_cache.clear()
            self._surface_cache.clear()
            self._read_by.clear()
            discovery.clear_cache(self.workspace)
            return
        path = self._resolve(Path(path))
        self._surface_cache.pop(path, None)
        for other in self._read_by.pop(path, ()):
            self._surface_cache.pop(other, None)  # its launches were read through this file (a Dockerfile)
        self._config_cache.pop(path, None)
        if path.name in ("pyproject.toml", "kimi-lsp.toml", ".kimi-lsp.toml"):
            self._settings_cache.clear()
            self._settings_by_file.clear()
        # discovery re-checks its cached pin files against the workspace's reads itself

    # -- schema --------------------------------------------------------------------------
    def schema_for(self, settings: Settings, sglang_version: str | None) -> Schema:
        return load_schema(settings.sglang_version or sglang_version)

    def schema_for_launch(self, path: Path, command: LaunchCommand | None = None) -> Schema:
        """The schema a launch in ``path`` is checked against (hover and completion use it): that
        of its resolved release when shipped, else the newest (the unknown-release check runs
        the newest first)."""
        from kimi_lsp.pins import discovery
        from kimi_lsp.release import ReleaseResolution, project_release, resolve_release

        settings = self.settings_for(path)
        gov = None
        release: ReleaseResolution | None
        if not settings.sglang_version:
            try:
                repo_root = self.workspace.repo_root(path.parent, None)
                own_kind = _own_kind(command) if command is not None else None
                gov = discovery.discover(path, self.workspace, repo_root, own_kind=own_kind)
            except Exception:  # hover must not fail on a broken pin file; lint reports it
                _log().debug("pin discovery failed for %s", path, exc_info=True)
        if command is not None:
            release = resolve_release(command, gov, self.workspace, settings)
        elif settings.sglang_version:
            release = ReleaseResolution(settings.sglang_version, "setting", "", None, True)
        else:
            release = project_release(gov, self.workspace) if gov is not None else None
        schema = load_schema_exact(release.version) if release is not None and release.version else None
        return schema or load_schema(None)

    def index_config_references(self, files: Iterable[Path]) -> None:
        """Record which YAML files a launch among ``files`` passes with ``--config``: such a
        file is checked through its launches (with their command-line overrides), not alone."""
        from kimi_lsp.launch import config_path_token, resolve_config_path

        for f in files:
            if f.suffix.lower() in (".yaml", ".yml") and "sglang" not in (self.workspace.text(f) or ""):
                continue  # only a launch names sglang; a bare config YAML passes nothing on
            _, surface = self.read_launches(f)
            if surface is None:
                continue
            for cmd in surface.launches:
                tok, _ = config_path_token(cmd)
                if tok is None:
                    continue
                p = resolve_config_path(tok.value, cmd, self.workspace.root, exists=self.workspace.exists)
                if p is not None:
                    self.referenced_configs.add(self._resolve(p))

    def _is_sglang_key(self, schema: Schema) -> Callable[[str], bool]:
        def pred(key: str) -> bool:
            # exact names only: a key that is merely a prefix of a flag (`image`) proves nothing
            return schema.config_key(key) is not None or schema.exact("--" + key) is not None

        return pred

    def _near_sglang_key(self, schema: Schema) -> Callable[[str], str]:
        def near(key: str) -> str:
            # "prefix": argparse accepts it (or finds it ambiguous); "typo": close to an option
            import difflib

            name = key.lstrip("-").replace("_", "-")
            if schema.match("--" + name) is not None:
                return "prefix"
            return "typo" if difflib.get_close_matches("--" + name, schema.long_options(), n=1, cutoff=0.8) else ""

        return near

    # -- linting -------------------------------------------------------------------------
    def read_launches(self, path: Path) -> tuple[SourceText | ReadFailure, SurfaceResult | None]:
        src = self.workspace.read(path)
        if not isinstance(src, SourceText):
            return src, None
        hit = self._surface_cache.get(path)
        if hit is not None and hit[0] is src:
            return src, hit[1]
        schema = load_schema(None)
        res = read_surface(src, is_sglang_key=self._is_sglang_key(schema), near_sglang_key=self._near_sglang_key(schema))
        self._surface_cache[path] = (src, res)
        for read in res.reads:
            self._read_by.setdefault(read, set()).add(path)
        return src, res

    def lint_file(self, path: Path) -> FileResult:
        asked = path if isinstance(path, Path) else Path(path)
        path = self._resolve(asked)
        settings = self.settings_for(path)
        result = FileResult(path, [])
        if settings.excluded(path):
            return result  # `exclude` in the configuration
        if settings.source is not None:
            result.depends_on.add(settings.source)
        diags: list[Diagnostic] = []
        for prob in settings.problems:
            # on every file these settings govern, not only the configuration file: a run that
            # lints one launch must still hear that its settings are broken (fail closed)
            diags.append(self._engine_diag("KL002", Location(prob.path, prob.span), prob.message))
        src, surface = self.read_launches(path)
        if isinstance(src, ReadFailure):
            if looks_like_launch_candidate(path) or looks_like_launch_candidate(asked):  # a k3.yaml -> /dev/zero link too
                from kimi_lsp.surfaces.detect import unreadable_severity

                proven = path in self.referenced_configs
                schema = load_schema(None)
                sev = unreadable_severity(asked, src.lossy, proven, self._is_sglang_key(schema), self._near_sglang_key(schema))
                if sev is not None:  # None: undecodable and never names sglang (not our domain)
                    diags.append(_with_severity(self._read_failure_diag(src), Severity(sev)))
                    result.is_launch_file = True
            result.diagnostics = self._finish(path, None, diags, settings)
            return result
        assert surface is not None
        result.is_launch_file = surface.is_launch_file
        result.depends_on.update(surface.reads)
        if surface.is_launch_file:
            for p in surface.problems:
                diags.append(self._engine_diag("KL001", Location(path, p.span), p.message))
        standalone_config = path in self.referenced_configs
        for cmd in surface.launches:
            if cmd.entry is Entry.CONFIG_FILE and standalone_config:
                continue  # checked through the launches that pass it with --config
            if result.launches == MAX_LAUNCHES_PER_FILE:
                # Bounded work per file (a notebook of 4,000 launch cells took ~30 s in one process,
                # holding the server's lint thread): the rest are not checked, and one warning on
                # the first of them says so, never a silent pass.
                diags.append(Diagnostic("KL001", f"not checked: kimi-lsp checks the first {MAX_LAUNCHES_PER_FILE} launches "
                                        f"of a file and this one holds {len(surface.launches)}; this launch and the ones "
                                        "after it were not checked (split the file)", Location(path, cmd.span), Severity.WARNING))
                break
            result.launches += 1
            diags.extend(self._lint_launch(cmd, src, settings, result))
        result.diagnostics = self._finish(path, src, diags, settings)
        return result

    def _lint_launch(self, cmd: LaunchCommand, src: SourceText, settings: Settings, result: FileResult) -> list[Diagnostic]:
        from kimi_lsp.pins import discovery
        from kimi_lsp.release import evidence_files, image_pin_source, resolve_release

        ws = self.workspace
        repo_root = ws.repo_root(cmd.path.parent, None)
        own_kind = _own_kind(cmd)
        discovered_box: list[Governing] = []

        def discovered() -> Governing:
            if not discovered_box:
                discovered_box.append(discovery.discover(cmd.path, ws, repo_root, own_kind=own_kind))
            return discovered_box[0]

        release = resolve_release(cmd, None if settings.sglang_version else discovered(), ws, settings)
        image_pins = image_pin_source(release, cmd.path)
        governing_box: list[Governing] = []

        def governing() -> Governing:
            if not governing_box:
                governing_box.append(_with_image_pins(discovered(), image_pins))
            return governing_box[0]

        schema = load_schema_exact(release.version) if release.version else None
        if schema is not None:
            out = self._run_rules(cmd, src, settings, result, schema, governing)
            out = [_name_release(d, release, ws) if _release_dependent(d.code) else d for d in out]
        else:
            candidates = release.candidates
            if candidates is None and release.version is not None:
                candidates = neighbours(release.version)  # a pre-release or a post no schema has
                if candidates and _is_dev_build(release.version):
                    # a development build holds main's code of its day: the releases after it
                    # bring what it may have (only what none of them accepts is reported)
                    order = every_release()
                    candidates = (candidates[0], *(v for v in order if _newer(v, candidates[0])))
            if candidates is None and cmd.doubt is not None and release.version is None:
                # Two guesses at once (which words are sglang's, which release reads them): only
                # what no sglang release accepts is worth saying.
                candidates = every_release()
            out = self._lint_unknown_release(cmd, src, settings, result, governing, _unknown_why(release, ws),
                                             candidates, release, _beyond_data(release))
            if candidates == () and (release.version is not None or release.source_kind == "manifest"):
                # A release older than every schema (`sglang==0.3.6`, image v0.3.6), or a range
                # admitting none of them (`sglang<0.4`): no schema can judge it (0.4.0's would
                # report options 0.3.x had), yet silence would read as "checked, all fine": say
                # that the arguments went unchecked (fail closed).
                out.append(_older_than_data(cmd, release, ws))
        out.extend(self._stale(cmd, src, settings, result, governing, release, schema, out))
        if cmd.doubt is not None:
            out = [_as_doubtful(d, cmd.doubt) for d in out]
        elif is_documentation(cmd.path):
            out = [_documented(d, cmd.path, release) for d in out]
        if cmd.surface in (Surface.PYTHON, Surface.NOTEBOOK):
            out = [_code_edits(d, cmd) for d in out]
        if discovered_box:
            gov = discovered_box[0]
            for s in gov.own:
                result.depends_on.add(s.path)
            for proj in gov.projects:
                for s in (*proj.locks, *proj.manifests):
                    result.depends_on.add(s.path)
        if release.location is not None and release.location.path != cmd.path:
            result.depends_on.add(release.location.path)
        result.depends_on.update(evidence_files(cmd, ws))  # a Helm chart's values.yaml / Chart.yaml
        return out

    def _lint_unknown_release(self, cmd: LaunchCommand, src: SourceText, settings: Settings, result: FileResult,
                              governing: Callable[[], Governing], why: str, candidates: tuple[str, ...] | None = None,
                              release: ReleaseResolution | None = None, beyond: bool = False) -> list[Diagnostic]:
        """No release is known: report a schema problem only when every release the launch may
        run gives it (same code, same place), as a warning without a safe fix, saying so. Those
        releases are the evidence's ``candidates`` (a range, a dated nightly), else the recent
        ones; none at all (a repository with its own sglang source) leaves the schema unjudged.
        A deprecation is no failure, so it is not reported for a release nobody names. The newest
        release runs first; the others only when it found something release-dependent. ``beyond``:
        the launch may run code newer than every schema (main, a release after our newest), where
        an option or choice no release has may have been added: the rules then say nothing of a
        word unlike every known option or choice."""
        versions = recent_releases() if candidates is None else candidates
        schemas = [load_schema(v) for v in versions] or [load_schema(None)]
        newest = schemas[-1]
        # A release named newer than every schema (``sglang==0.5.24`` before kimi-lsp knows it) is
        # judged by the newest schema all the same, as a warning that names the gap: an option
        # added since may be reported, but a typo is never a silent pass. A build of main (a `dev`
        # or nightly image: ``release.beyond``) runs code no release has yet, where the rules say
        # nothing of a word unlike every known option or choice.
        main_build = release is not None and _main_build(release)
        out = self._run_rules(cmd, src, settings, result, newest, governing, beyond=main_build)
        if not versions:
            return [d for d in out if not _release_dependent(d.code)]
        out = [d for d in out if d.code not in _NOT_A_FAILURE]
        dependent = [d for d in out if _release_dependent(d.code)]
        if not dependent:
            return out
        agreed = {_diag_key(d) for d in dependent}
        # A fix is offered only where every candidate release offers the same edits: a
        # replacement that exists from 0.5.14 on is no fix for a launch that may run 0.5.12.
        fixable = {_diag_key(d): {_fix_key(f) for f in d.fixes if f.edits} for d in dependent}
        # only the rules that reported something can agree: the others' findings would be dropped
        asked = frozenset(d.code for d in dependent)
        for schema in schemas[:-1]:
            others = self._run_rules(cmd, src, settings, result, schema, governing, dependent_only=True, beyond=main_build,
                                     only=asked)
            theirs = {_diag_key(d): d for d in others if _release_dependent(d.code)}
            agreed &= set(theirs)
            if not agreed:
                break
            for key in agreed:
                fixable[key] &= {_fix_key(f) for f in theirs[key].fixes if f.edits}
        out = [_fixes_kept(d, fixable[_diag_key(d)]) if _diag_key(d) in fixable else d for d in out]
        if candidates is not None and len(schemas) <= 4:
            span = ", ".join(s.version for s in schemas[:-1]) + f" and {newest.version}" if len(schemas) > 1 else newest.version
            note = f"in sglang {span}; the release that runs this launch is unknown: {why}"
        else:
            span = f"{schemas[0].version} to {newest.version}" if len(schemas) > 1 else newest.version
            note = f"in every sglang release from {span}; the release that runs this launch is unknown: {why}"
        if main_build:
            note += "; a build of main may hold options and choices newer than these releases"
        elif beyond and release is not None and release.version and _version_kind(release) == "unordered":
            # `sglang==banana`: no release at all (pip refuses the requirement), never "newer"
            note += f"; `{release.version}` is not a version (PEP 440), so no release can be told from it"
        elif beyond:
            note += (f"; it may be newer than sglang {shipped_versions()[-1]}, the newest release kimi-lsp knows, "
                     "where an option added since would be valid")
        related = _evidence_related(release)
        kept: list[Diagnostic] = []
        for d in out:
            if not _release_dependent(d.code):
                kept.append(d)
            elif _diag_key(d) in agreed:
                g = _as_guess(d, note)
                kept.append(replace(g, related=(*g.related, *related)) if related else g)
        return kept

    def _stale(self, cmd: LaunchCommand, src: SourceText, settings: Settings, result: FileResult,
               governing: Callable[[], Governing], release: ReleaseResolution, schema: Schema | None,
               found: list[Diagnostic]) -> list[Diagnostic]:
        """KL240: what the launch's own release accepts but today's newest sglang rejects (a
        flag removed or renamed since). A claim about staleness, never that this launch fails:
        judged only where the launch's release is known or narrowed, and none of its releases
        is the newest."""
        if not settings.enabled("KL240"):
            return []
        if schema is not None:
            judged: tuple[str, ...] = (schema.version,)
        elif release.as_of:
            judged = (release.as_of,)  # main of a day: from the release of that day
        elif release.version is not None and _is_dev_build(release.version) and neighbours(release.version):
            judged = (neighbours(release.version) or ("",))[:1]
        elif release.candidates:
            judged = release.candidates
        else:
            return []
        newest_version = shipped_versions()[-1]
        if newest_version in judged or release.beyond:
            return []
        newest = load_schema(newest_version)
        judged_schemas = [load_schema(v) for v in judged]
        # a `--config` file the launch's releases never read (0.4.x to 0.5.2 have no such
        # option): today's release would read it, but what it says of the file is no staleness
        there = self._run_rules(cmd, src, settings, result, newest, governing, dependent_only=True,
                                only=frozenset({"KL201"}), read_config=any(s.config_merger for s in judged_schemas))
        if not there:
            return []
        already = {_diag_key(d)[1:] for d in found}
        on = judged[0] if len(judged) == 1 else (f"{', '.join(judged[:-1])} and {judged[-1]}" if len(judged) <= 4
                                                 else f"{judged[0]} to {judged[-1]}")
        whose = "the release this launch runs" if schema is not None else "the releases this launch may run"
        if release.source_kind == "repository":
            whose = "named in this repository"
        elif release.last_change is not None:
            shallow = ", a shallow clone's oldest commit" if release.last_change.shallow else ""
            whose = f"current when the file was last committed, on {release.last_change.day}{shallow}"
        out = []
        for d in there:
            if d.code != "KL201" or _diag_key(d)[1:] in already:
                continue
            module = _module_gone(cmd, d, judged)
            if module:
                # `python -m sglang.bench_one_batch`: a module the launch's release has, removed since
                runs = f"`python -m {module}` runs on sglang {on}" if len(judged) == 1 else \
                    f"`python -m {module}` runs on at least one of sglang {on}"
                message = f"{runs} ({whose}), but not on today's sglang {newest_version}: {d.message}"
                out.append(Diagnostic("KL240", message, d.location, Severity.INFO, (),
                                      (*d.related, *_evidence_related(release)), d.data))
                continue
            if not _accepted_by_any(d, judged_schemas, self.workspace):
                continue  # not a flag the launch's release has either (or a file it never reads)
            valid = f"Valid on sglang {on}" if len(judged) == 1 else f"Valid on at least one of sglang {on}"
            message = f"{valid} ({whose}), but today's sglang {newest_version} rejects it at start-up: {d.message}"
            out.append(Diagnostic("KL240", message, d.location, Severity.INFO, (),
                                  (*d.related, *_evidence_related(release)), d.data))
        return out

    def _run_rules(self, cmd: LaunchCommand, src: SourceText, settings: Settings, result: FileResult,
                   schema: Schema, governing: Callable[[], Governing], dependent_only: bool = False, beyond: bool = False,
                   only: frozenset[str] | None = None, read_config: bool = True) -> list[Diagnostic]:
        """The enabled rules' diagnostics for ``cmd`` resolved against ``schema``. An agreement
        run (``dependent_only``: another candidate release) runs the release-dependent rules
        only, and of those the ``only`` codes when given. ``read_config``: False when the
        ``--config`` file is one the launch's own release never reads."""
        ws = self.workspace
        out: list[Diagnostic] = []
        config: ConfigFile | None = None
        if cmd.entry in (Entry.LAUNCH_SERVER, Entry.SERVE) and read_config:
            config, cfg_diags = self._load_config(cmd, schema, result)
            out.extend(cfg_diags)
        launch = resolve(cmd, schema, config, diffusers_dir=self._diffusers_dir(cmd, result))
        # An agreement run (another candidate release) only says where problems sit: re-linting
        # to vet its fixes would be thrown away with them.
        ctx = LaunchContext(launch, ws, settings, src, _governing_fn=governing,
                            cache=unvetted() if dependent_only else {}, beyond_schema=beyond)
        for r in self._enabled_rules(settings):
            if dependent_only and (not _release_dependent(r.code) or (only is not None and r.code not in only)):
                continue
            if launch.diffusion and r.code not in _DIFFUSION_RULES:
                continue  # the diffusion server's own arguments: the LLM server's rules do not apply
            try:
                for v in r.check(ctx):
                    if launch.diffusion_doubt is not None:
                        v = _doubted(v, launch.diffusion_doubt)
                    out.append(self._to_diag(r, v))
            except Exception:  # a bug in one rule must not take down the others (or the server)
                import traceback

                msg = f"internal error in rule {r.code} on {cmd.path}: {traceback.format_exc(limit=8)}"
                _log().error(msg)
                self.errors.append(msg)
        if not dependent_only:
            if any(f.applicability is Applicability.SAFE for d in out for f in d.fixes):
                # a safe fix leaves no new error (rules/_vet.py: imported when there is one to vet)
                from kimi_lsp.rules._vet import vet_safe_fixes

                out = vet_safe_fixes(ctx, out, self._enabled_rules(settings))
        return out

    def _enabled_rules(self, settings: Settings) -> tuple[Rule, ...]:
        hit = self._rules_for.get(id(settings))
        if hit is None or hit[0] is not settings:  # keyed by identity; the entry keeps it alive
            hit = self._rules_for[id(settings)] = (settings, tuple(r for r in self._rules if settings.enabled(r.code)))
        return hit[1]

    def _load_config(self, cmd: LaunchCommand, schema: Schema, result: FileResult) -> tuple[ConfigFile | None, list[Diagnostic]]:
        from kimi_lsp.launch import config_path_token

        tok, toks = config_path_token(cmd)
        if tok is None or not schema.config_merger:
            # a release without `--config` (0.4.x to 0.5.2): argparse rejects the option and the
            # file is never opened, so it is neither read here nor a dependency of the result
            # (KL201 reports the option; the file stays a referenced config, never linted alone)
            return None, []
        path = resolve_config_path(tok.value, cmd, self.workspace.root, self.workspace.exists)
        if path is None or path.suffix.lower() not in (".yaml", ".yml") or not self.workspace.exists(path):
            return None, []  # reported by the config rules (missing file, non-YAML)
        touched(path)
        path = self.workspace.resolve(path)
        if not self._inside_repository(cmd, path):
            # A launch may name any file, but a linter that reads it would echo another
            # repository's (or the system's) text into diagnostics and CI annotations. The config
            # counts as unread: rules that need its contents say nothing (a miss, never a claim).
            return None, []
        result.depends_on.add(path)
        self.referenced_configs.add(path)
        hit = self._config_cache.get(path)
        if hit is None:
            src = self.workspace.read(path)
            if not isinstance(src, SourceText):
                hit = (None, None)
                diag = self._read_failure_diag(src)
                return None, [diag]
            surface = read_surface(src, is_sglang_key=self._is_sglang_key(schema), force=Surface.CONFIG_YAML)
            cfg = next((c.config for c in surface.launches if c.config is not None), None)
            hit = (cfg, surface)
            self._config_cache[path] = hit
        cfg, sr = hit
        diags: list[Diagnostic] = []
        if sr is not None:
            for p in sr.problems:
                diags.append(self._engine_diag("KL001", Location(path, p.span), p.message))
        return cfg, diags

    def _diffusers_dir(self, cmd: LaunchCommand, result: FileResult) -> Callable[[str], bool] | None:
        """For a ``sglang serve`` launch: whether its model path is a directory of this
        repository holding a diffusers ``model_index.json`` (sglang's ``os.path.isdir`` and
        ``_is_diffusers_model_dir``: a ``_diffusers_version`` key). A relative path is looked
        for beside the launch file, then at the workspace root (the launch's working directory
        is unknown). The file read, or its absence probed, is a dependency of the result."""
        if cmd.entry is not Entry.SERVE:
            return None

        def check(model: str) -> bool:
            p = Path(model)
            if not model or model.startswith("$") or "\n" in model:
                return False
            bases = (Path("/"),) if p.is_absolute() else tuple(b for b in (cmd.base_dir, self.workspace.root) if b is not None)
            for base in bases:
                index = base / p / "model_index.json"
                if not self.workspace.exists(index):  # recorded as touched: a later file re-lints
                    continue
                index = self.workspace.resolve(index)
                if not self._inside_repository(cmd, index):
                    return False  # another repository's (or the system's) model: unread, a miss
                result.depends_on.add(index)
                return _names_diffusers_version(self.workspace.text(index))
            return False

        return check

    def _inside_repository(self, cmd: LaunchCommand, path: Path) -> bool:
        root = self.workspace.repo_root(cmd.path.parent, self.workspace.root)  # no .git: the workspace
        try:
            path.relative_to(self._resolve(Path(root)))
        except ValueError:
            return False
        return True

    # -- diagnostics ---------------------------------------------------------------------
    def _to_diag(self, r: Rule, v: Violation) -> Diagnostic:
        return Diagnostic(
            code=r.code,
            message=v.message,
            location=v.location,
            severity=v.severity or r.default_severity,
            fixes=v.fixes,
            related=v.related,
            data=dict(v.data or {}),
        )

    def _engine_diag(self, code: str, loc: Location, message: str) -> Diagnostic:
        r = BY_CODE[code]
        return Diagnostic(code, message, loc, r.default_severity)

    def _read_failure_diag(self, f: ReadFailure) -> Diagnostic:
        # the text is unreadable, so the position is the file's start; the reason names the byte
        return self._engine_diag("KL001", Location(f.path, Span(0, 0)), f"cannot read launch file: {f.reason}")

    def lint_files(self, files: Iterable[Path]) -> list[Diagnostic]:
        """Lint ``files`` in order and merge: what the CLI and ``batch`` report."""
        return merged(self.lint_file(f).diagnostics for f in files)

    def _finish(self, path: Path, src: SourceText | None, diags: list[Diagnostic], default: Settings) -> list[Diagnostic]:
        """Settings (select/ignore/severity) and suppressions, per file a diagnostic sits in."""
        by_file: dict[Path, list[Diagnostic]] = {}
        for d in merged([diags]):
            by_file.setdefault(d.location.path, []).append(d)
        out: list[Diagnostic] = []
        for fpath, ds in by_file.items():
            settings = self.settings_for(fpath) if fpath != path else default
            ds = [d for d in ds if settings.enabled(d.code, fpath)]
            ds = [_with_severity(d, settings.severity_for(d.code, d.severity)) for d in ds]
            fsrc = src if fpath == path else self.workspace.read(fpath)
            if isinstance(fsrc, SourceText) and suppression.MARKER in fsrc.text:  # else no directive
                directives = suppression.parse(fsrc.text, fsrc.lines)
                applied = suppression.apply(ds, directives, fsrc.lines)
                ds = applied.kept
                if fpath == path:
                    ds.extend(self._unused(fsrc, directives, applied.used, settings))
            out.extend(ds)
        if path not in by_file and isinstance(src, SourceText) and suppression.MARKER in src.text:
            directives = suppression.parse(src.text, src.lines)
            out.extend(self._unused(src, directives, set(), default))
        out.sort(key=Diagnostic.sort_key)
        return out

    def _unused(self, src: SourceText, directives: list[suppression.Directive], used: set[int], settings: Settings) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        if not settings.enabled("KL901", src.path):
            return out
        for i, dv in enumerate(directives):
            if i in used:
                continue
            what = f"[{', '.join(dv.codes)}]" if dv.codes else ""
            msg = f"unused suppression `kimi-lsp: {'ignore-file' if dv.kind == 'file' else 'ignore'}{what}`: nothing to suppress"
            if dv.invalid:
                msg = f"suppression names unknown codes: {', '.join(dv.invalid)}"
            # remove the comment, and the whitespace before it when it trails code
            line = src.lines.line_of(dv.span.start)
            ls = src.lines.line_start(line)
            before = src.text[ls : dv.span.start]
            if before.strip():
                start = ls + len(before.rstrip())
                edit = Edit(src.path, Span(start, dv.span.end), "")
            else:
                nxt = src.lines.line_start(line + 1) if line + 1 < src.lines.line_count else dv.span.end
                edit = Edit(src.path, Span(ls, nxt), "")
            fix = Fix("Remove the unused suppression", (edit,), Applicability.SAFE)
            d = self._engine_diag("KL901", Location(src.path, dv.span), msg)
            out.append(Diagnostic(d.code, d.message, d.location, settings.severity_for("KL901", d.severity), (fix,)))
        return out


def merged(per_source: Iterable[Iterable[Diagnostic]], only: Path | None = None) -> list[Diagnostic]:
    """The one "merge, de-duplicate, sort" for diagnostics of several lints (files, or one file
    and the launches that reference it), used by the engine, the CLI, ``batch`` and the server.
    Of equal diagnostics (same file, span, code and message) the first is kept; the sort is by
    file, offset and code, and stable, so ties keep the order they were linted in. ``only``:
    keep the diagnostics that sit in that file."""
    out: list[Diagnostic] = []
    seen: set[tuple[Path, Span, str, str]] = set()
    for diags in per_source:
        for d in diags:
            if only is not None and d.location.path != only:
                continue
            key = (d.location.path, d.location.span, d.code, d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
    out.sort(key=Diagnostic.sort_key)
    return out


# a notebook's `!pip install` cells are its own (a Python file's installs are not read)
_OWN_KINDS = {Surface.DOCKERFILE: "dockerfile", Surface.SHELL: "shell", Surface.MARKDOWN: "markdown", Surface.NOTEBOOK: "notebook"}


def _own_kind(cmd: LaunchCommand) -> str | None:
    """Whether the launch file's own ``pip install`` lines are a pin source, and of which kind."""
    if cmd.own_pins or cmd.surface in _OWN_KINDS:
        return _OWN_KINDS.get(cmd.surface)
    return None


def is_documentation(path: Path) -> bool:
    return path.suffix.lower() in DOC_SUFFIXES


_DOC_DOUBT = "an example in documentation, checked against {where}: whoever follows it may install other versions"


def _documented(d: Diagnostic, doc: Path, release: ReleaseResolution) -> Diagnostic:
    """A launch in documentation is an example: what it rests on inside the document (its own
    ``pip install`` lines, its image) is the example's own, but the project's pins are only a
    guess at what its reader installs. A claim resting on them is at most a warning."""
    elsewhere = [r.location.path for r in d.related if r.location.path != doc]
    if _release_dependent(d.code) and release.location is not None and release.location.path != doc:
        elsewhere.insert(0, release.location.path)
    if not elsewhere:
        return d
    return _as_doubtful(d, _DOC_DOUBT.format(where=f"the project's pins ({elsewhere[0].name})"))


# characters an edit inside a Python string literal (or a notebook's JSON string) must not bring in
_CODE_UNSAFE = frozenset("\"'\\{}\n\r")


def _code_edits(d: Diagnostic, cmd: LaunchCommand) -> Diagnostic:
    """A launch written in code: an edit of the launch file may only replace the text of one
    word (a literal, a keyword) with plain text. Adding a flag, or a quote that the literal or the
    notebook's JSON would need escaped, is not written for the user: the fix keeps its title and
    loses its edits (display-only)."""
    words = [t.span for t in cmd.argv]
    if cmd.config is not None:
        for e in cmd.config.entries:
            words.extend((e.key.span, e.value_span, *e.item_spans))

    def fits(edit: Edit) -> bool:
        if edit.path != cmd.path:
            return True
        if _CODE_UNSAFE & set(edit.new_text):
            return False
        if edit.span.end <= cmd.span.start or edit.span.start >= cmd.span.end:
            return True  # not the launch: a notebook's own `!pip install` line
        return any(w.start <= edit.span.start and edit.span.end <= w.end for w in words)

    if all(fits(e) for f in d.fixes for e in f.edits):
        return d
    fixes = tuple(f if all(fits(e) for e in f.edits) else Fix(f.title, (), Applicability.DISPLAY_ONLY, f.followup) for f in d.fixes)
    return Diagnostic(d.code, d.message, d.location, d.severity, fixes, d.related, d.data)


def _as_doubtful(d: Diagnostic, doubt: str) -> Diagnostic:
    """A diagnostic about a launch the reader only guessed: at most a warning, the doubt named,
    and no fix applied without the user asking (safe fixes become unsafe)."""
    if d.severity.rank < Severity.WARNING.rank:
        return d  # info/hint: already below a warning
    fixes = tuple(
        Fix(f.title, f.edits, Applicability.UNSAFE, f.followup) if f.applicability is Applicability.SAFE else f
        for f in d.fixes
    )
    return Diagnostic(d.code, f"{d.message} ({doubt})", d.location, Severity.WARNING, fixes, d.related, d.data)


# How many of the newest shipped releases a launch of unknown release is checked against. sglang
# ships a release every few weeks; three cover the last two to three months, which is what a
# deployment that pins nothing most likely runs. Pre-releases are left out (few deploy them), and
# a release and its .postN fixes count once, by the newest of them.
RECENT_RELEASES = 3


def recent_releases() -> tuple[str, ...]:
    """The shipped releases an unknown-release launch is checked against, oldest first."""
    return every_release()[-RECENT_RELEASES:]


def every_release() -> tuple[str, ...]:
    """Each shipped release in its newest ``.postN``, oldest first."""
    shipped = shipped_versions()
    # asked once per launch whose release is unknown: remembered for the shipped data it reads
    if _EVERY_RELEASE and _EVERY_RELEASE[0] is shipped:
        return _EVERY_RELEASE[1]
    newest: dict[str, str] = {}  # base release -> its newest .postN (shipped_versions is sorted)
    for v in shipped:
        if not re.search(r"(a|b|rc|dev)\d*$", v):
            newest[re.sub(r"\.post\d+$", "", v)] = v
    out = tuple(newest.values()) or tuple(shipped)
    _EVERY_RELEASE[:] = [shipped, out]
    return out


_EVERY_RELEASE: list[tuple[str, ...]] = []


# Deprecations warn about launches that still work: not reported when the release is unknown.
_NOT_A_FAILURE = frozenset({"KL204"})

# KL3xx rules about pins alone (flashinfer companions, sglang's own pins): no schema involved.
_PIN_ONLY = frozenset({"KL328", "KL329"})


def _release_dependent(code: str) -> bool:
    """Argument-schema (KL2xx) and cross-argument (KL3xx) checks read the release's schema."""
    return code.startswith(("KL2", "KL3")) and code not in _PIN_ONLY


def _diag_key(d: Diagnostic) -> tuple[str, Path, Span]:
    return (d.code, d.location.path, d.location.span)


def neighbours(version: str) -> tuple[str, ...] | None:
    """The shipped releases next to ``version`` in version order (the one below and the one
    above), when ``version`` itself has no schema but lies among them: a release candidate
    (``0.5.0rc2``) or a post release kimi-lsp does not ship holds code between its neighbours.
    () when it is older than every shipped release (no schema speaks for it); None when it is
    newer than every one or cannot be ordered."""
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        v = Version(version)
        ordered = sorted((Version(s), s) for s in shipped_versions())
    except InvalidVersion:
        return None
    below = [s for sv, s in ordered if sv < v]
    above = [s for sv, s in ordered if sv > v]
    if not above:
        return None
    return (below[-1], above[0]) if below else ()  # older than every schema: none speaks for it


def _older_than_data(cmd: LaunchCommand, release: ReleaseResolution, workspace: Workspace) -> Diagnostic:
    """A warning on a launch whose named release is older than every shipped schema (or whose
    range admits none of them): its arguments are not checked (the mirror of a release newer than the data, which is judged by
    the newest schema; the oldest one would call options that 0.3.x had unknown)."""
    from kimi_lsp.pep440 import Version
    from kimi_lsp.release import describe

    shipped = shipped_versions()
    if release.version is None:  # a range admitting no shipped release
        message = (f"not checked: {release.why}, and it admits no release kimi-lsp knows ({shipped[0]} to "
                   f"{shipped[-1]}): this launch's arguments are not checked")
    else:
        never = " (no sglang release is numbered below 0.1)" if Version(release.version) < Version("0.1") else ""
        message = (f"not checked: {describe(release, workspace)}{never} is older than every release kimi-lsp knows "
                   f"({shipped[0]} to {shipped[-1]}): this launch's arguments are not checked")
    related: tuple[Related, ...] = ()
    if release.location is not None and release.location.path != cmd.path:
        related = (Related(release.location, f"sglang {release.version or 'range'} named here"),)
    return Diagnostic("KL001", message, Location(cmd.path, cmd.span), Severity.WARNING, (), related)


def _beyond_data(release: ReleaseResolution) -> bool:
    """Whether an unknown-release launch may run code newer than every shipped schema: main
    (``dev``, nightly builds after the newest release), a development build of any release, or a
    release named above the newest."""
    kind = _version_kind(release)
    return kind in ("main", "newer", "unordered")


def _main_build(release: ReleaseResolution) -> bool:
    """Whether the launch may run a build of main rather than a release: a `dev`/nightly image, a
    repository that installs main, a development version (``0.5.6.post3.dev1278+gad1b4e47``).
    There an option or choice no release has may exist: only near misses are said."""
    return _version_kind(release) == "main"


def _version_kind(release: ReleaseResolution) -> str:
    """"main" (a build of main, or a development build: code past its release), "newer" (a
    release above every shipped one), "unordered" (a version that cannot be read), else ""."""
    if release.beyond:
        return "main"
    if release.version is None:
        return ""
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        v = Version(release.version)
    except InvalidVersion:
        return "unordered"
    newer = v > Version(shipped_versions()[-1])
    if v.is_devrelease or v.local is not None:
        # `.devN`, `+pr.15207.g39d5bd57a`: past every release, main; else judged by the
        # releases after it (_lint_launch), which bring what it may hold
        return "main" if newer else ""
    return "newer" if newer else ""


def _is_dev_build(version: str) -> bool:
    from kimi_lsp.pep440 import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        return False
    return bool(v.is_devrelease or v.local is not None)


def _newer(a: str, b: str) -> bool:
    from kimi_lsp.pep440 import Version

    return bool(Version(a) > Version(b))


def _unknown_why(release: ReleaseResolution, workspace: Workspace) -> str:
    from kimi_lsp.release import describe

    if release.version is None:
        return release.why or "no image tag, pip line, lock or manifest names it"
    shipped = shipped_versions()
    return f"{describe(release, workspace)}, which kimi-lsp has no argument schema for (it has {shipped[0]} to {shipped[-1]})"


_KIND_WORDS = {"pip": "pip line", "image": "image", "lock": "lock", "manifest": "pin"}


def _name_release(d: Diagnostic, release: ReleaseResolution, workspace: Workspace) -> Diagnostic:
    """Say which release a schema diagnostic assumed and where that came from."""
    from kimi_lsp.release import describe

    related = d.related
    if release.location is not None and release.source_kind != "setting":
        related = (*related, Related(release.location, f"sglang {release.version} assumed from this {_KIND_WORDS.get(release.source_kind, release.source_kind)}"))
    return Diagnostic(d.code, f"{d.message} ({describe(release, workspace)})", d.location, d.severity, d.fixes, related, d.data)


def _names_diffusers_version(text: str | None) -> bool:
    """Whether a model_index.json text is a diffusers pipeline's (sglang: ``"_diffusers_version"
    in json.load(f)``); unreadable or not JSON: no (sglang's json.load would raise, and no
    server starts either way)."""
    if text is None or "_diffusers_version" not in text:
        return False
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and "_diffusers_version" in data


def _module_gone(cmd: LaunchCommand, d: Diagnostic, judged: tuple[str, ...]) -> str:
    """The entry-point module ``d`` says today's release lacks (KL201 on the program's words:
    ``python -m sglang.bench_one_batch`` from 0.5.21 on), when at least one of the ``judged``
    releases has it; "" otherwise."""
    if cmd.entry is not Entry.NO_CONFIG or d.location.path != cmd.path or d.location.span != cmd.program.span:
        return ""
    from kimi_lsp.knowledge.entry_points import missing_module, module_of

    module = module_of(cmd.program.value)
    if not module or all(missing_module(v, module) for v in judged):
        return ""
    return module


def _accepted_by_any(d: Diagnostic, schemas: list[Schema], ws: Workspace) -> bool:
    """Whether the word ``d`` sits on (an option, a ``--config`` key, a ServerArgs keyword) names
    one flag of at least one of ``schemas``."""
    from kimi_lsp.knowledge.schema import Flag

    text = ws.text(d.location.path)
    if text is None:
        return False
    word = text[d.location.span.start : d.location.span.end].strip().strip("\"'").split("=", 1)[0]
    if not word.startswith("-"):
        word = "--" + word.replace("_", "-")
    return any(isinstance(s.match(word), Flag) for s in schemas)


def _fix_key(f: Fix) -> tuple[object, ...]:
    return tuple((e.path, e.span, e.new_text) for e in f.edits)


def _fixes_kept(d: Diagnostic, keep: set[tuple[object, ...]]) -> Diagnostic:
    """``d`` with the edits of the fixes not in ``keep`` dropped (their titles stay, display-only:
    the hint is still worth reading, but no edit is made that some candidate release rejects)."""
    fixes: list[Fix] = []
    message = d.message
    for f in d.fixes:
        if not f.edits or _fix_key(f) in keep:
            fixes.append(f)
        elif f.title.startswith("Did you mean "):
            # a guess from one release's spelling, which another candidate would guess otherwise
            message = message.replace(f" ({f.title[0].lower()}{f.title[1:]})", "")
        else:
            fixes.append(Fix(f.title, (), Applicability.DISPLAY_ONLY, f.followup))
    if tuple(fixes) == d.fixes:
        return d
    return Diagnostic(d.code, message, d.location, d.severity, tuple(fixes), d.related, d.data)


# Evidence places added to a diagnostic's related locations, at most.
_RELATED_EVIDENCE = 3


def _evidence_related(release: ReleaseResolution | None) -> tuple[Related, ...]:
    """Where the repository names the releases a launch was judged by (release.from_repository),
    for the report's related locations and `--format json`."""
    if release is None or not release.evidence:
        return ()
    out = []
    for e in release.evidence[:_RELATED_EVIDENCE]:
        names = "a fork" if e.fork else "main" if e.main else " / ".join(e.releases)
        out.append(Related(e.location, f"{e.what} names sglang {names}"))
    return tuple(out)


def _as_guess(d: Diagnostic, note: str) -> Diagnostic:
    """A diagnostic that holds in every recent release but not for a known one: at most a
    warning, the doubt named, no safe fix."""
    fixes = tuple(
        Fix(f.title, f.edits, Applicability.UNSAFE, f.followup) if f.applicability is Applicability.SAFE else f
        for f in d.fixes
    )
    sev = Severity.WARNING if d.severity.rank > Severity.WARNING.rank else d.severity
    return Diagnostic(d.code, f"{d.message} ({note})", d.location, sev, fixes, d.related, d.data)


def _with_image_pins(gov: Governing, image_pins: PinSource | None) -> Governing:
    """The official image's own pins govern before the repository's: a requirements file the
    container never installs does not govern it. A launch file that installs sglang or
    flashinfer-python itself keeps its own pins (they replace the image's)."""
    if image_pins is None:
        return gov
    from kimi_lsp.pins.discovery import Governing

    if any(s.pins_for("sglang") or s.pins_for("flashinfer-python") for s in gov.own):
        return gov
    return Governing((image_pins, *gov.own), (), gov.searched)


def _with_severity(d: Diagnostic, sev: Severity) -> Diagnostic:
    if sev == d.severity:
        return d
    return Diagnostic(d.code, d.message, d.location, sev, d.fixes, d.related, d.data)


# -- for `kimi-lsp verify` ---------------------------------------------------------------


# what is checked of a `sglang serve` launch of a diffusion model (its parser's errors)
# KL212/KL213: the diffusion server's own `--config` reader (load_config_file) refuses a file of
# another suffix and a missing one alike; what the file holds is not read (README)
_DIFFUSION_RULES = frozenset({"KL201", "KL202", "KL203", "KL212", "KL213", "KL216"})


def _doubted(v: Violation, doubt: str) -> Violation:
    """A finding on a launch only probably of a diffusion model: at most a warning, and why."""
    sev = v.severity
    if sev is None or sev is Severity.ERROR:
        sev = Severity.WARNING
    message = (f"{v.message} (if sglang serves it with its diffusion server: {doubt}, which sglang decides"
               " from the model's files)")
    return Violation(v.location, message, v.fixes, v.related, sev, v.data)


def launch_settings(path: Path, workspace: Workspace | None = None) -> list[dict[str, object]]:
    """Per launch in ``path``: sglang dests -> values after ``--config`` merging (CLI wins)."""
    ws = workspace or Workspace()
    eng = Engine(ws)
    path = Path(path).resolve()
    src, surface = eng.read_launches(path)
    if surface is None:
        return []
    out: list[dict[str, object]] = []
    for cmd in surface.launches:
        settings = eng.settings_for(path)
        schema = eng.schema_for(settings, None)
        dummy = FileResult(path, [])
        config, _ = eng._load_config(cmd, schema, dummy) if cmd.entry in (Entry.LAUNCH_SERVER, Entry.SERVE) else (None, [])
        launch: ResolvedLaunch = resolve(cmd, schema, config)
        values: dict[str, object] = {}
        for use in launch.uses:
            f = use.flag
            if not f.takes_value:
                values[f.dest] = True
            elif f.nargs in ("+", "*") or isinstance(f.nargs, int):
                values[f.dest] = [t.value for t in use.values]
            else:
                values[f.dest] = _coerce(f.type, use.value)
        values["_env"] = {k: (v.value.value if v.value else None) for k, v in launch.env.items()}
        out.append(values)
    return out


def _coerce(kind: str | None, value: str | None) -> object:
    if value is None:
        return None
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
    except ValueError:
        return value
    return value


__all__ = ["Engine", "FileResult", "launch_settings", "looks_like_launch_candidate", "LAUNCH_SUFFIXES", "ALL_RULES"]
