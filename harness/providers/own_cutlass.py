"""The project's own CUTLASS / CuTe kernels (kernels/cutlass/), built by nvcc at prepare time.

GEMM:
  own-cutlass                       SM90 TMA + WGMMA warp-specialized, config and scheduler
                                    chosen per shape by timing candidates (kernels/cutlass/gemm_tune.py);
                                    bf16, fp16, fp8 e4m3 (nt) and tf32 (nt, and nn through
                                    CUTLASS's register-A mainloop)
  own-cutlass-burst                 own-cutlass without its decode twin rule (kernels/cutlass/
                                    decode_twin.py): the tuner's pick, for the A/B over processes
                                    that judges the rule (reports list it as a variant, a rung)
  own-cutlass-sm90-<config>         one fixed SM90 config (tile, cluster, schedule in the name)
  own-cutlass-sm80-multistage       the Ampere rung: cp.async multistage + mma.sync
Attention:
  own-cutlass                       CuTe FMHA forward (SM80 style: cp.async, ldmatrix, mma.sync)
  own-cutlass-sm90                  the same pipeline on Hopper's wgmma (Q K^T SS, P V RS with P
                                    in registers), sm_90 only: what wgmma adds over mma.sync
  own-cutlass-fa3                   FlashAttention-3's structure on those wgmmas: TMA producer
                                    warpgroup, K/V pipelines, two or three consumer warpgroups
                                    in ping-pong, softmax overlapped with P V, persistent CTAs
                                    taking tiles from an atomic counter, O stored 16 bytes per
                                    thread, FA3's tile shapes chosen per problem (fmha.py's
                                    fa3_tile_rule); any length; sm_90 only
  own-cutlass-fa3-t128              fa3 on 128x128 tiles (128x64 at head_dim 256) everywhere
  own-cutlass-fa3-no-pingpong, -no-overlap, -no-pingpong-no-overlap, -no-st16, -static,
  -not-persistent                   its ladder rungs: fa3-t128 with a feature switched off
  own-cutlass-fa3-exp-emu           fa3 with a quarter of its exp2 on the FMA pipe (head_dim 64)
  own-cutlass-fa3-tiles             fa3 on FlashAttention-3's non-causal tile shapes at every
                                    point: 192x128 with three consumer warpgroups at head_dim 64,
                                    128x176 at 128, 128x80 at 256

Compilation happens in prepare (never inside a timed window) and lands in a content-keyed cache;
every provider here declares its libraries (Provider.prebuild), which the runner builds in one
parallel call before a sweep's first point. Without nvcc or the
CUTLASS headers, and with no cached library to load, the rows are skipped with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from harness_kernels.cutlass import build
from harness_kernels.cutlass.fmha import WS_FEATURES
from harness_kernels.cutlass.gemm import CONFIGS, ELEMENT_BYTES, GemmConfig

from harness.device import DeviceInfo
from harness.problems import AttentionProblem, GemmProblem, Problem
from harness.providers.registry import Prebuild, Prepared, Unsupported, register

GEMM_DTYPES = tuple(ELEMENT_BYTES)  # bf16, fp16, fp8_e4m3, tf32


def _available() -> str | None:
    """None when a library can be compiled here, or at least loaded from a carried cache."""
    why = build.toolchain_problem()
    if why is None:
        return None
    root = build.cache_dir()
    if root.is_dir() and any(p.joinpath("lib.so").is_file() for p in root.iterdir()):
        return None  # prepare loads the matching cached build, or skips with `why`
    return f"{why}; no cached builds in {root}"


def _load_or_skip(fn, *args, **kwargs):
    """Run a prepare step; a missing toolchain or a refused shape becomes a skipped row."""
    try:
        return fn(*args, **kwargs)
    except build.BuildError as e:
        if build.toolchain_problem() is not None:
            raise Unsupported(str(e).splitlines()[0]) from None
        raise
    except build.KernelError as e:
        if e.refused:
            raise Unsupported(f"own-cutlass: {e}") from None
        raise


def _build_libraries(specs: list, max_workers: int | None = None) -> dict[str, str]:
    """Build (or find cached) the libraries `specs` in parallel nvcc processes; {} when there
    are none or nothing can be built here."""
    from harness_kernels.cutlass.prebuild import prebuild as run

    if not specs or build.toolchain_problem() is not None:
        return {}
    return run(specs, max_workers)


def _prebuild_of(provider: str) -> Prebuild:
    """The libraries provider `provider` loads for a sweep's problems; one builder for all of
    this module's providers, so a sweep's CUTLASS libraries compile in one parallel call."""
    return Prebuild(
        lambda problems: specs_for(problems, [provider]), _build_libraries, "CUTLASS libraries"
    )


# ---- GEMM -------------------------------------------------------------------------------------


def _gemm_supports_for(dtypes: tuple[str, ...], config: GemmConfig | None = None):
    """The tuned provider takes `dtypes`; a fixed-config provider also needs `config` to have a
    library for the problem's dtype and layout."""

    def supports(problem: GemmProblem, device: DeviceInfo) -> str | None:
        from harness_kernels.cutlass.gemm import alignment_problem, layout_problem

        b_col = problem.layout == "nt"
        if problem.dtype not in dtypes:
            return f"takes {', '.join(dtypes)}"
        if problem.batch != 1:
            return "batched GEMM is not implemented in the own CUTLASS kernels"
        if why := layout_problem(problem.dtype, b_col):
            return why
        if config is not None and (why := config.unbuildable(problem.dtype, b_col)):
            return why
        return alignment_problem(problem.m, problem.n, problem.k, problem.dtype, b_col)

    return supports


def _alpha(inputs: dict) -> torch.Tensor | None:
    """fp8: the product of the per-tensor scales as one device float (the epilogue's alpha)."""
    if "a_scale" not in inputs:
        return None
    return (inputs["a_scale"] * inputs["b_scale"]).to(torch.float32).reshape(1).contiguous()


def _reference(a: torch.Tensor, b: torch.Tensor, alpha: torch.Tensor | None) -> torch.Tensor:
    """What tuning compares candidates with: cuBLAS in the inputs' precision (bf16 for fp8)."""
    if alpha is None:
        return torch.matmul(a, b)
    return (torch.matmul(a.to(torch.bfloat16), b.to(torch.bfloat16)).float() * alpha).to(
        torch.bfloat16
    )


def _tuned_gemm(
    problem: GemmProblem, inputs: dict, device: DeviceInfo, twin_rule: bool
) -> Prepared:
    """The tuner's choice for the shape; with `twin_rule`, at decode the clustered twin where
    the bursts cannot tell it from the pick (kernels/cutlass/decode_twin.py)."""
    from harness_kernels.cutlass import decode_twin, gemm_tune
    from harness_kernels.cutlass.gemm import prepare_gemm

    a, b = inputs["a"], inputs["b"]
    alpha = _alpha(inputs)
    key = (
        problem.m,
        problem.n,
        problem.k,
        problem.dtype,
        problem.layout,
        device.name,
        device.index,
    )
    sms = device.sm_count or gemm_tune.HOPPER_SMS
    b_col = problem.layout == "nt"
    cands = gemm_tune.sm90_candidates(problem.m, problem.n, problem.k, problem.dtype, sms, b_col)
    reference = lambda: _reference(a, b, alpha)  # only computed if this shape is not tuned yet
    result = _load_or_skip(gemm_tune.tune, a, b, cands, reference, key, alpha)
    (chosen, options), tuned_ms = (result.config, result.options), gemm_tune.best_ms(result)
    rule = None
    if twin_rule:
        rule = decode_twin.prefer_twin(
            problem.m, problem.dtype, (chosen, options), result.timings_ms, result.capped_ms, cands
        )
    if rule is not None:
        (chosen, options), _ = rule
        tuned_ms = result.timings_ms[f"{chosen.name}:{options}"]
    launch = _load_or_skip(prepare_gemm, a, b, chosen, alpha=alpha, options=options)
    # tune_source: "tuned" (timed now), "seeded" (timed now, another GPU's best few only:
    # kernels/tune_seed.py) or "cache" (a decision read from disk, kernels/tune_cache.py)
    config = dict(
        launch.config,
        tuned_ms=tuned_ms,
        tune_source=result.source,
        tune_key=result.cache_key,
    )
    if rule is not None:
        config["twin_rule"] = rule[1]  # the burst's pick, the twin run instead, both burst ms
    config["candidates"] = {k: round(v, 5) for k, v in result.timings_ms.items()}
    if result.capped_ms:  # the contenders re-timed at the power cap, which decided
        config["capped"] = {k: round(v, 5) for k, v in result.capped_ms.items()}
    if result.rejected:
        config["rejected"] = result.rejected
    return Prepared(launch, config)


def _tuned_provider(name: str, twin_rule: bool, doc: str) -> None:
    """Register `name`: the tuner's choice, with or without the decode twin rule."""

    def prepare(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        return _tuned_gemm(problem, inputs, device, twin_rule=twin_rule)

    prepare.__doc__ = doc
    register(
        name,
        "gemm",
        "own",
        ("nvidia",),
        min_cc=(9, 0),
        available=_available,
        supports=_gemm_supports_for(GEMM_DTYPES),
        prebuild=_prebuild_of("own-cutlass"),  # both load the same libraries
    )(prepare)


_tuned_provider(
    "own-cutlass",
    True,
    "Own CUTLASS SM90 GEMM (TMA + WGMMA, warp-specialized), config chosen per shape by timing; "
    "at decode the clustered twin where the tuner's bursts cannot tell it from the pick.",
)
_tuned_provider(
    "own-cutlass-burst",
    False,
    "Own CUTLASS SM90 GEMM, the tuner's pick without own-cutlass's decode twin rule: the A/B "
    "that judges the rule (the same tune decisions, read from the same cache).",
)


def _gemm_config(name: str) -> None:
    from harness_kernels.cutlass.gemm import prepare_gemm

    config = CONFIGS[name]

    def prepare(problem: GemmProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        launch = _load_or_skip(prepare_gemm, inputs["a"], inputs["b"], config, alpha=_alpha(inputs))
        return Prepared(launch, dict(launch.config))

    what = "SM80-style cp.async multistage + mma.sync" if config.kernel == "sm80" else "SM90"
    prepare.__doc__ = f"Own CUTLASS GEMM, fixed config {name} ({what})."
    register(
        f"own-cutlass-{name}",
        "gemm",
        "own",
        ("nvidia",),
        min_cc=config.min_cc,
        available=_available,
        supports=_gemm_supports_for(config.dtypes, config),
        prebuild=_prebuild_of(f"own-cutlass-{name}"),
    )(prepare)


# ---- attention ----------------------------------------------------------------------------------


def _attention_supports(
    problem: AttentionProblem, device: DeviceInfo | None, kernel: str = "sm80"
) -> str | None:
    from harness_kernels.cutlass.fmha import shape_problem

    return shape_problem(
        problem.q_len,
        problem.kv_len,
        problem.head_dim,
        problem.dtype,
        problem.causal,
        paged=problem.kv_layout == "paged",
        kernel=kernel,
    )


@register(
    "own-cutlass",
    "attention",
    "own",
    ("nvidia",),
    min_cc=(8, 0),
    available=_available,
    supports=_attention_supports,
    prebuild=_prebuild_of("own-cutlass"),
)
def own_cutlass_attention(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own CuTe FMHA forward (cp.async + ldmatrix + mma.sync, online softmax), dense KV."""
    from harness_kernels.cutlass.fmha import prepare_fmha

    launch = _load_or_skip(
        prepare_fmha, inputs["q"], inputs["k"], inputs["v"], causal=problem.causal
    )
    return Prepared(launch, dict(launch.config))


def _attention_sm90_supports_for(kernel: str):
    def supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
        cc = device.compute_capability if device is not None else None
        if cc is not None and cc[0] != 9:
            return f"wgmma FMHA runs on sm_90 only (sm_90a code); device is sm_{cc[0]}{cc[1]}"
        return _attention_supports(problem, device, kernel)

    return supports


@register(
    "own-cutlass-sm90",
    "attention",
    "own",
    ("nvidia",),
    min_cc=(9, 0),
    available=_available,
    supports=_attention_sm90_supports_for("sm90"),
    prebuild=_prebuild_of("own-cutlass-sm90"),
)
def own_cutlass_attention_sm90(
    problem: AttentionProblem, inputs: dict, device: DeviceInfo
) -> Prepared:
    """Own CuTe FMHA forward on wgmma (SS for Q K^T, RS for P V), two warpgroups, dense KV."""
    from harness_kernels.cutlass.fmha import prepare_fmha

    launch = _load_or_skip(
        prepare_fmha, inputs["q"], inputs["k"], inputs["v"], causal=problem.causal, kernel="sm90"
    )
    return Prepared(launch, dict(launch.config))


TILES_SAID = {
    "128": "128x128 (128x64 at head_dim 256)",
    "rule": "FlashAttention-3's shapes chosen per problem (fa3_tile_rule)",
    "fa3": "FlashAttention-3's non-causal shapes (192x128, 128x176, 128x80 at head_dim 64, 128, "
    "256)",
}


def _attention_ws(kernel: str) -> None:
    """Register own-cutlass-<kernel> for one rung of the warp-specialized FMHA (fmha_sm90_ws.cu)."""
    from harness_kernels.cutlass.fmha import prepare_fmha

    features = WS_FEATURES[kernel]

    def prepare(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        launch = _load_or_skip(
            prepare_fmha,
            inputs["q"],
            inputs["k"],
            inputs["v"],
            causal=problem.causal,
            kernel=kernel,
        )
        switches: dict = {name: bool(on) for name, on in features._asdict().items()}
        switches["exp_emu"] = features.exp_emu  # one exp2 in this many emulated; 0: none
        switches["tiles"] = features.tiles  # how the tile is chosen; config["tile"] says which
        return Prepared(launch, dict(launch.config, **switches))

    persistent = (
        "persistent, tiles handed out by an atomic counter (causal too)"
        if features.dynamic
        else "persistent (non-causal; causal one CTA per tile)"
        if features.persistent
        else "one CTA per tile"
    )
    prepare.__doc__ = (
        "Own CuTe FMHA forward, warp-specialized (TMA producer, K/V pipelines, two consumer "
        f"warpgroups, three on 192-row tiles); tiles {TILES_SAID[features.tiles]}; "
        f"ping-pong {'on' if features.pingpong else 'off'}, "
        f"intra-warpgroup overlap {'on' if features.overlap else 'off'}, {persistent}, O stored "
        f"{16 if features.store16 else 2} bytes per thread per store"
        f"{f', one exp2 in {features.exp_emu} on the FMA pipe' if features.exp_emu else ''}; "
        "dense KV."
    )
    name = f"own-cutlass-{kernel}"
    register(
        name,
        "attention",
        "own",
        ("nvidia",),
        min_cc=(9, 0),
        available=_available,
        supports=_attention_sm90_supports_for(kernel),
        prebuild=_prebuild_of(name),
    )(prepare)


# ---- prebuild -----------------------------------------------------------------------------------


def specs_for(problems: Iterable[Problem], providers: Iterable[str] | None = None) -> list:
    """The libraries the own-cutlass providers will load for `problems` (all own-cutlass
    providers unless `providers` names some)."""
    from harness_kernels.cutlass import gemm_tune
    from harness_kernels.cutlass.fmha import fmha_spec

    wanted = set(providers) if providers is not None else None
    specs = []
    for p in problems:
        if isinstance(p, GemmProblem) and p.dtype in GEMM_DTYPES and p.batch == 1:
            b_col = p.layout == "nt"
            if wanted is None or "own-cutlass" in wanted:
                for c, _ in gemm_tune.sm90_candidates(p.m, p.n, p.k, p.dtype, b_col=b_col):
                    specs.append(c.spec(p.dtype, b_col))
            for name, c in CONFIGS.items():
                if wanted is None or f"own-cutlass-{name}" in wanted:
                    if c.unbuildable(p.dtype, b_col) is None:
                        specs.append(c.spec(p.dtype, b_col))
        elif isinstance(p, AttentionProblem):
            for kernel in ("sm80", "sm90", *WS_FEATURES):
                name = "own-cutlass" if kernel == "sm80" else f"own-cutlass-{kernel}"
                refused = _attention_supports(p, None, kernel)
                if (wanted is None or name in wanted) and refused is None:
                    specs.append(
                        fmha_spec(p.dtype, p.head_dim, kernel, causal=p.causal, q_len=p.q_len)
                    )
    return list(dict.fromkeys(specs))


def prebuild(
    problems: Iterable[Problem],
    providers: Iterable[str] | None = None,
    max_workers: int | None = None,
) -> dict[str, str]:
    """Build (or find cached) every library `problems` need, in parallel nvcc processes; call it
    before a sweep so no point compiles. Returns {library label: 'cached' | 'built in N s' |
    'error: ...'}; {} when nothing is needed or nothing can be built here."""
    return _build_libraries(specs_for(problems, providers), max_workers)


for _name in CONFIGS:
    _gemm_config(_name)

for _kernel in WS_FEATURES:
    _attention_ws(_kernel)
