//! Parsing of every setting from tables of variables, without the process
//! environment.

use super::*;

/// Settings from `(name, value)` pairs; every other variable unset.
fn with(vars: &[(&str, &str)]) -> Settings {
    let owned: Vec<(String, String)> = vars.iter().map(|&(n, v)| (n.to_owned(), v.to_owned())).collect();
    Settings::from_lookup(move |name| owned.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()))
}

#[test]
fn unset_gives_the_defaults() {
    let s = Settings::default();
    assert_eq!(s.device.autotune, Ok(TuneMode::Off));
    assert!(!s.device.autotune_log);
    assert_eq!((s.device.wait_spin_us, s.device.compute_units), (None, None));
    let g = &s.gemm;
    assert_eq!((g.spirv, g.wide), (None, None));
    assert_eq!(g.stage, StageMode::Auto);
    assert!(g.bf16_coop && g.skinny && g.coop && g.coop_split && g.rows);
    assert!(!g.spirv_two_stages && !g.coopmat2_log);
    assert_eq!((g.tiled_fill, g.tiled_blocks, g.scratch_bytes), (None, None, None));
    assert_eq!((g.skinny_fill, g.coop_fill, g.rows_fill), (None, None, None));
    assert_eq!((g.coopmat2_block.as_deref(), g.skinny_tile.as_deref()), (None, None));
    assert_eq!(
        s.gemv,
        GemvSettings { axpy: None, f16_wide_loads: true, fill: None, narrow: true, narrow_tile_rows: 2 }
    );
    assert_eq!(
        s.conv,
        ConvSettings {
            f16_start: ConvF16Start::Gather,
            cols_bytes: None,
            winograd: None,
            winograd_tiles_fastest: None,
            stem: ConvStem::Auto,
            gemm_1x1_nhwc: None,
            khr_small: None,
            split_fill: None,
            scratch_bytes: None
        }
    );
    assert!(!s.reduce.disable_subgroups && !s.reduce.topk_sort && !s.movement.concat_scalar);
    assert!(s.random.int64);
    assert_eq!(s.multi, MultiSettings { peer_chunk_kib: None, allreduce_direct_kib: None });
    assert_eq!(s, Settings::default());
}

#[test]
fn autotune_modes_and_refusal() {
    let cases = [("", Ok(TuneMode::Off)), ("0", Ok(TuneMode::Off)), (" OFF ", Ok(TuneMode::Off))];
    for (value, want) in cases {
        assert_eq!(with(&[("WGC_AUTOTUNE", value)]).device.autotune, want, "{value:?}");
    }
    for (value, want) in [("1", TuneMode::On), ("On", TuneMode::On), ("cached", TuneMode::Cached)] {
        assert_eq!(with(&[("WGC_AUTOTUNE", value)]).device.autotune, Ok(want), "{value:?}");
    }
    let err = with(&[("WGC_AUTOTUNE", "sometimes")]).device.autotune.unwrap_err();
    assert!(err.contains("WGC_AUTOTUNE") && err.contains("sometimes"), "{err}");
}

#[test]
fn switches_that_are_on_unless_turned_off() {
    type Field = fn(&Settings) -> bool;
    let table: [(&str, &str, Field); 8] = [
        ("WGC_GEMM_BF16_COOP", "0", |s| s.gemm.bf16_coop),
        ("WGC_GEMM_SKINNY", "0", |s| s.gemm.skinny),
        ("WGC_GEMM_COOP", "0", |s| s.gemm.coop),
        ("WGC_GEMM_COOP_SPLIT", "0", |s| s.gemm.coop_split),
        ("WGC_GEMM_ROWS", "0", |s| s.gemm.rows),
        ("WGC_GEMV_F16_LOAD", "8", |s| s.gemv.f16_wide_loads),
        ("WGC_GEMV_NARROW", "0", |s| s.gemv.narrow),
        ("WGC_RANDOM_INT64", "0", |s| s.random.int64),
    ];
    for (name, off, field) in table {
        assert!(!field(&with(&[(name, off)])), "{name}={off}");
        assert!(field(&with(&[(name, "1")])), "{name}=1");
        assert!(field(&with(&[(name, "")])), "{name} empty");
    }
}

#[test]
fn switches_that_are_off_unless_turned_on() {
    type Field = fn(&Settings) -> bool;
    let table: [(&str, &str, Field); 5] = [
        ("WGC_GEMM_SPIRV_STAGES", "2", |s| s.gemm.spirv_two_stages),
        ("WGC_TOPK", "sort", |s| s.reduce.topk_sort),
        ("WGC_CONCAT", "scalar", |s| s.movement.concat_scalar),
        ("WGC_AUTOTUNE_LOG", "1", |s| s.device.autotune_log),
        ("WGC_DISABLE_SUBGROUPS", "1", |s| s.reduce.disable_subgroups),
    ];
    for (name, on, field) in table {
        assert!(field(&with(&[(name, on)])), "{name}={on}");
        assert!(!field(&Settings::default()), "{name} unset");
    }
    // Set to anything but 0 counts; set to 0 does not.
    assert!(!with(&[("WGC_DISABLE_SUBGROUPS", "0")]).reduce.disable_subgroups);
    assert!(with(&[("WGC_DISABLE_SUBGROUPS", "")]).reduce.disable_subgroups);
    assert!(!with(&[("WGC_AUTOTUNE_LOG", "0")]).device.autotune_log);
    // Any value, even 0, turns the log on.
    assert!(with(&[("WGC_COOPMAT2_LOG", "0")]).gemm.coopmat2_log);
    assert!(!with(&[("WGC_GEMM_SPIRV_STAGES", "1")]).gemm.spirv_two_stages);
}

#[test]
fn routes_and_modes() {
    let spirv = |v| with(&[("WGC_GEMM_SPIRV", v)]).gemm.spirv;
    assert_eq!(spirv("0"), Some(SpirvRoute::Wgsl));
    assert_eq!(spirv("1"), Some(SpirvRoute::Khr));
    assert_eq!(spirv("2"), Some(SpirvRoute::Coopmat2));
    assert_eq!(spirv("3"), None);
    assert_eq!(spirv(" 1"), None);
    let wide = |v| with(&[("WGC_GEMM_WIDE", v)]).gemm.wide;
    assert_eq!((wide("0"), wide("1"), wide("2"), wide("")), (Some(false), Some(true), None, None));
    let stage = |v| with(&[("WGC_GEMM_STAGE", v)]).gemm.stage;
    assert_eq!((stage("0"), stage("always"), stage("1")), (StageMode::Off, StageMode::Always, StageMode::Auto));
    let axpy = |v| with(&[("WGC_GEMV_AXPY", v)]).gemv.axpy;
    assert_eq!(axpy("plain"), Some(AxpySetting::Plain));
    assert_eq!(axpy("staged"), Some(AxpySetting::Staged));
    assert_eq!(axpy("wide"), Some(AxpySetting::Wide));
    assert_eq!(axpy("x"), Some(AxpySetting::Wide));
    let conv = |v| with(&[("WGC_CONV_F16", v)]).conv.f16_start;
    assert_eq!(
        (conv("implicit"), conv("im2col"), conv("gather")),
        (ConvF16Start::Implicit, ConvF16Start::Im2col, ConvF16Start::Gather)
    );
    let winograd = |v| with(&[("WGC_CONV_WINOGRAD", v)]).conv.winograd;
    assert_eq!((winograd("0"), winograd("1"), winograd("rule"), winograd("on")), (Some(false), Some(true), None, None));
    let stem = |v| with(&[("WGC_CONV_STEM", v)]).conv.stem;
    assert_eq!(
        (stem("pad8"), stem("pairs"), stem("columns"), stem("other")),
        (ConvStem::Pad8, ConvStem::Pairs, ConvStem::Columns, ConvStem::Auto)
    );
    let layout = |v| with(&[("WGC_CONV_WINOGRAD_LAYOUT", v)]).conv.winograd_tiles_fastest;
    assert_eq!((layout("tiles"), layout("channels"), layout("1")), (Some(true), Some(false), None));
    assert_eq!(with(&[("WGC_GEMV_NARROW_TILE", "1")]).gemv.narrow_tile_rows, 1);
    assert_eq!(with(&[("WGC_GEMV_NARROW_TILE", "3")]).gemv.narrow_tile_rows, 2);
}

#[test]
fn numbers_and_their_filters() {
    let s = with(&[
        ("WGC_WAIT_SPIN_US", "300"),
        ("WGC_GEMM_TILED_FILL", "0"),
        ("WGC_GEMM_SCRATCH_BYTES", "9000"),
        ("WGC_GEMM_SKINNY_FILL", "0"),
        ("WGC_GEMM_ROWS_FILL", "64"),
        ("WGC_CONV_COLS_BYTES", "1"),
        ("WGC_CONV_SPLIT_FILL", "0"),
        ("WGC_CONV_SCRATCH_BYTES", "64"),
        ("WGC_SOFTMAX_SPLIT_GROUPS", "0"),
        ("WGC_PEER_CHUNK_KIB", "4"),
        ("WGC_ALLREDUCE_DIRECT_KIB", "0"),
        ("WGC_COMPUTE_UNITS", "58"),
    ]);
    assert_eq!(s.device.compute_units, Some(58));
    assert_eq!(s.device.wait_spin_us, Some(300));
    assert_eq!((s.gemm.tiled_fill, s.gemm.scratch_bytes, s.gemm.skinny_fill), (Some(0), Some(9000), Some(0)));
    assert_eq!(s.gemm.rows_fill, Some(64));
    assert_eq!(s.conv.cols_bytes, Some(1));
    assert_eq!((s.conv.split_fill, s.conv.scratch_bytes), (Some(0), Some(64)));
    assert_eq!(s.norm.softmax_split_groups, Some(0));
    assert_eq!(s.multi, MultiSettings { peer_chunk_kib: Some(4), allreduce_direct_kib: Some(0) });
    // Positive-only settings drop 0; anything unparsable is unset.
    let s = with(&[
        ("WGC_GEMM_COOP_FILL", "0"),
        ("WGC_GEMV_FILL", "0"),
        ("WGC_REDUCE_ROW_LOADS", "0"),
        ("WGC_COLUMNS_INVOCATIONS", "0"),
        ("WGC_WAIT_SPIN_US", "-1"),
        ("WGC_GEMM_SCRATCH_BYTES", "1e6"),
        ("WGC_COMPUTE_UNITS", "0"),
    ]);
    assert_eq!(s.device.compute_units, None);
    assert_eq!(
        (s.gemm.coop_fill, s.gemv.fill, s.reduce.row_loads, s.reduce.columns_invocations),
        (None, None, None, None)
    );
    assert_eq!((s.device.wait_spin_us, s.gemm.scratch_bytes), (None, None));
    let s = with(&[("WGC_GEMM_COOP_FILL", "264"), ("WGC_GEMV_FILL", "7"), ("WGC_REDUCE_ROW_LOADS", "4")]);
    assert_eq!((s.gemm.coop_fill, s.gemv.fill, s.reduce.row_loads), (Some(264), Some(7), Some(4)));
    for (value, want) in [("1", Some(1)), ("2", Some(2)), ("4", Some(4)), ("3", None), ("8", None)] {
        assert_eq!(with(&[("WGC_COLUMNS_ROW_GROUPS", value)]).reduce.columns_row_groups, want, "{value}");
    }
}

#[test]
fn named_blocks_and_tiles() {
    let blocks = |v| with(&[("WGC_GEMM_TILED_BLOCKS", v)]).gemm.tiled_blocks;
    assert_eq!(blocks("1x2"), Some((1, 2)));
    assert_eq!(blocks("2x2"), Some((2, 2)));
    assert_eq!(blocks("3x1"), None);
    assert_eq!(blocks("2"), None);
    assert_eq!(blocks("ax1"), None);
    let s = with(&[("WGC_GEMM_CM2_BLOCK", "128x256x64"), ("WGC_GEMM_SKINNY_TILE", "n1k64")]);
    assert_eq!(s.gemm.coopmat2_block.as_deref(), Some("128x256x64"));
    assert_eq!(s.gemm.skinny_tile.as_deref(), Some("n1k64"));
}

#[test]
fn from_env_reads_the_process_environment() {
    // A variable no test sets: from_env sees what the lookup of the
    // environment gives (the rest of the process may set others).
    let s = Settings::from_env();
    assert_eq!(s.gemm.coopmat2_block, std::env::var("WGC_GEMM_CM2_BLOCK").ok());
}
