//! One test per item of the codegen.md §6 checklist: each shows pld does not produce the form
//! ptoas rejects (or mis-handles) — either the emitted text has the accepted form, or the
//! program is refused with a diagnostic naming the op.

mod common;
use common::*;
use pld_ir::{Attr, BinOp, Builder, DataType, Diagnostic, Expr, FunctionKind, Target, Type, ValueId};
use std::collections::HashMap;

fn stage(
    b: &mut Builder<'_>,
    name: &str,
    shape: &[i64],
    d: DataType,
    mem: &str,
) -> Result<ValueId, Diagnostic> {
    b.assign_op(
        name,
        "tile.create",
        vec![ints(shape)],
        vec![("dtype", Attr::DType(d)), ("target_memory", Attr::Str(mem.into()))],
    )
}

fn full() -> String {
    only(&emit(&full_kernel())).to_string()
}

/// `%name = <op> ... : <type>`-style definitions: SSA name → the line.
fn defs(text: &str) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for l in text.lines() {
        if let Some((lhs, _)) = l.trim().split_once(" = ") {
            if lhs.starts_with('%') && !lhs.contains(' ') {
                m.insert(lhs.to_string(), l.trim().to_string());
            }
        }
    }
    m
}

/// The signature's `%argK: type` pairs.
fn sig_types(text: &str) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for l in text.lines().filter(|l| l.contains("func.func @")) {
        let inner = &l[l.find('(').unwrap() + 1..l.find(") attributes").unwrap()];
        for part in inner.split(", ") {
            if let Some((n, t)) = part.split_once(": ") {
                m.insert(n.to_string(), t.to_string());
            }
        }
    }
    m
}

// ---------------------------------------------------------------------------------------
// Parse level
// ---------------------------------------------------------------------------------------

#[test]
fn p1_element_type_spellings() {
    init();
    let f = kernel(
        "types",
        FunctionKind::Aiv,
        &[
            ("a", tensor(&[8, 32], DataType::BF16)),
            ("b", tensor(&[8, 32], DataType::INT8)),
            ("c", tensor(&[8, 32], DataType::UINT16)),
            ("d", tensor(&[8, 32], DataType::FP16)),
        ],
        |b, p| {
            for (i, id) in p.iter().enumerate() {
                let t = b.assign_op(
                    format!("t{i}"),
                    "tile.load",
                    vec![v(*id), ints(&[0, 0]), ints(&[8, 32])],
                    vec![],
                )?;
                b.assign_op(format!("o{i}"), "tile.store", vec![v(t), ints(&[0, 0]), v(*id)], vec![])?;
            }
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        "CHECK: (%arg0: !pto.ptr<bf16>, %arg1: !pto.ptr<i8>, %arg2: !pto.ptr<ui16>, %arg3: !pto.ptr<f16>)\nCHECK: dtype=bf16\nCHECK: !pto.tensor_view<?x?xi8>",
    );
    for bad in ["fp32", "float", "bfloat16", "int8", "<u16"] {
        assert!(!only(&out).contains(bad), "{bad} spelled");
    }
    // A dtype without a pto spelling is refused, not guessed.
    let g = kernel("i4", FunctionKind::Aiv, &[("a", tensor(&[8, 32], DataType::INT4))], |b, p| {
        b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 32])], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![g]), Target::A2A3);
    assert!(msgs[0].contains("int4 has no pto element type"), "{msgs:?}");
}

#[test]
fn p2_tile_buffer_long_form_and_no_gm_tiles() {
    let text = full();
    for l in text.lines().filter(|l| l.contains("!pto.tile_buf<")) {
        for ty in l.split("!pto.tile_buf<").skip(1) {
            let fields: Vec<&str> =
                ty.split('>').next().unwrap().split(", ").map(|f| f.split('=').next().unwrap()).collect();
            assert_eq!(
                fields,
                ["loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal", "pad"]
            );
        }
    }
    assert!(!text.contains("loc=gm"));
    assert!(text.contains("v_row=?, v_col=?") && text.contains("fractal=512"));
    init();
    let f = kernel("gm", FunctionKind::Aiv, &[], |b, _| {
        stage(b, "t", &[4, 4], DataType::FP32, "DDR")?;
        Ok(())
    });
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert!(msgs[0].contains("memory space DDR cannot be a pto tile buffer"), "{msgs:?}");
}

#[test]
fn p3_make_tensor_view_keywords_and_pointer_types() {
    let text = full();
    let sig = sig_types(&text);
    let d = defs(&text);
    for l in text.lines().filter(|l| l.contains("pto.make_tensor_view")) {
        assert!(l.contains(", shape = [") && l.contains("], strides = ["), "{l}");
        let ptr = l.split("make_tensor_view ").nth(1).unwrap().split(',').next().unwrap();
        let elem = l.rsplit("x").next().unwrap().trim_end_matches('>');
        let ptr_ty = sig.get(ptr).cloned().unwrap_or_else(|| {
            let def = &d[ptr];
            def.rsplit("-> ").next().unwrap().to_string()
        });
        assert_eq!(ptr_ty, format!("!pto.ptr<{elem}>"), "{l}");
    }
}

#[test]
fn p4_partition_view_syntax() {
    let text = full();
    let n = count(&text, "pto.partition_view");
    assert!(n >= 9);
    for l in text.lines().filter(|l| l.contains("pto.partition_view")) {
        assert!(l.contains(", offsets = [") && l.contains("], sizes = ["), "{l}");
        assert!(l.contains("] : !pto.tensor_view<") && l.contains(" -> !pto.partition_tensor_view<"), "{l}");
    }
}

#[test]
fn p5_scalar_operands_have_the_parser_types() {
    init();
    // An index loop variable and an i64 scalar as notify/wait values are cast to i32.
    let f = kernel(
        "vals",
        FunctionKind::Aiv,
        &[
            ("sig", dist(&[2, 1], DataType::INT32)),
            ("peer", Type::Scalar(DataType::INT32)),
            ("w", Type::Scalar(DataType::INT64)),
        ],
        |b, p| {
            let (sig, peer, w) = (p[0], p[1], p[2]);
            b.for_range("i", (Expr::int(0), Expr::int(2), Expr::int(1)), vec![], |b, i, _| {
                b.eval_op(
                    "pld.system.notify",
                    vec![v(sig), v(peer), ints(&[0, 0]), v(i)],
                    vec![("op", ai(1))],
                )?;
                Ok(vec![])
            })?;
            b.eval_op("pld.system.wait", vec![v(sig), ints(&[1, 0]), v(w)], vec![("cmp", ai(1))])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: = arith.index_cast %i_idx : index to i32
        CHECK: pto.comm.tnotify(
        CHECK-SAME: , i32) {notifyOp = #pto<notify_op set>}
        CHECK: = arith.trunci %arg2 : i64 to i32
        CHECK-NEXT: pto.comm.twait(
        CHECK-SAME: , i32) {cmp = #pto<wait_cmp ge>}
        "#,
    );
    for l in text.lines().filter(|l| l.contains("pto.alloc_tile")) {
        assert!(l.contains("_i64 valid_row"), "addr must be i64: {l}");
    }
    for l in text.lines().filter(|l| l.contains("pto.partition_view") || l.contains("make_tensor_view")) {
        for op in l.split(['[', ']']).nth(1).unwrap().split(", ") {
            assert!(
                op.ends_with("_index")
                    || op.contains("idx")
                    || op.starts_with("%arg")
                    || op.chars().nth(1).is_some_and(|c| c.is_ascii_digit()),
                "{op} in {l}"
            );
        }
    }
}

#[test]
fn p6_enum_attribute_spellings() {
    let text = full();
    for good in [
        "#pto<atomic_type atomic_add>",
        "#pto<atomic_type atomic_none>",
        "#pto<notify_op atomic_add>",
        "#pto<wait_cmp ge>",
        "#pto.layout<nd>",
        "#pto.layout<dn>",
        "#pto.kernel_kind<vector>",
        "#pto.fence_scope<gm>",
        "#pto.address_space<gm>",
        "pto.barrier <PIPE_ALL>",
    ] {
        assert!(text.contains(good), "{good} missing");
    }
    for bad in [
        "#pto.atomic_type",
        "#pto.notify_op",
        "#pto.wait_cmp",
        "#pto<layout",
        "#pto<kernel_kind",
        "#pto<fence_scope",
        "cmp = 1",
        "cmp = 3",
    ] {
        assert!(!text.contains(bad), "{bad} present");
    }
}

#[test]
fn p7_buf_group_and_type_list_match() {
    for pipelined in [false, true] {
        init();
        let f = kernel(
            "k",
            FunctionKind::Aiv,
            &[
                ("dst", dist(&[16, 64], DataType::FP32)),
                ("src", dist(&[16, 64], DataType::FP32)),
                ("peer", Type::Scalar(DataType::INT32)),
            ],
            |b, p| {
                let mut args = vec![v(p[0]), v(p[2]), v(p[1])];
                args.push(v(stage(b, "ping", &[4, 64], DataType::FP32, "Vec")?));
                if pipelined {
                    args.push(v(stage(b, "pong", &[4, 64], DataType::FP32, "Vec")?));
                }
                b.eval_op("pld.tile.put", args.clone(), vec![("atomic", ai(0))])?;
                let mut gargs = args;
                gargs.swap(0, 2);
                b.eval_op("pld.tile.get", gargs, vec![])?;
                Ok(())
            },
        );
        let out = emit(&program(vec![f]));
        for l in only(&out).lines().filter(|l| l.contains("pto.comm.t")) {
            let group = l.split("buf(").nth(1).unwrap().split(')').next().unwrap();
            let tiles = group.split(", ").count();
            assert_eq!(tiles, if pipelined { 2 } else { 1 }, "{l}");
            let types = l.split(" : ").nth(1).unwrap();
            let n_types = types.matches("!pto.").count();
            assert_eq!(n_types, 2 + tiles, "{l}");
            assert_eq!(l.contains("buf(%ping, %pong)"), pipelined);
        }
    }
}

#[test]
fn p8_every_view_is_used_with_its_one_type() {
    let text = full();
    let mut types: HashMap<String, String> = HashMap::new();
    for l in text.lines().filter(|l| l.contains("pto.make_tensor_view")) {
        let name = l.trim().split(" = ").next().unwrap().to_string();
        types.insert(name, l.rsplit(" : ").next().unwrap().to_string());
    }
    for l in text.lines().filter(|l| l.contains("pto.partition_view")) {
        let src = l.split("partition_view ").nth(1).unwrap().split(',').next().unwrap();
        let used = l.split(" : ").nth(1).unwrap().split(" -> ").next().unwrap();
        assert_eq!(&types[src], used, "{l}");
        assert!(used.starts_with("!pto.tensor_view<?x?x"), "views are fully dynamic: {used}");
    }
}

// ---------------------------------------------------------------------------------------
// Verifier level (comm)
// ---------------------------------------------------------------------------------------

#[test]
fn v1_comm_globals_are_partition_views() {
    let text = full();
    for l in text.lines().filter(|l| l.contains("pto.comm.t")) {
        let types = l.split(" : ").nth(1).unwrap();
        assert!(!types.contains("!pto.tensor_view"), "{l}");
        assert!(types.contains("!pto.partition_tensor_view<"), "{l}");
    }
}

#[test]
fn v2_transfer_views_have_identical_signatures() {
    init();
    let f = kernel(
        "k",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[16, 64], DataType::FP32)),
            ("src", tensor(&[16, 64], DataType::FP32)),
            ("peer", Type::Scalar(DataType::INT32)),
            ("n", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let s = stage(b, "st", &[4, 64], DataType::FP32, "Vec")?;
            b.eval_op(
                "pld.tile.put",
                vec![
                    v(p[0]),
                    v(p[2]),
                    v(p[1]),
                    v(s),
                    ints(&[0, 0]),
                    ints(&[0, 0]),
                    Expr::tuple(vec![v(p[3]), Expr::int(64)]),
                ],
                vec![("atomic", ai(0))],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    let l = only(&out).lines().find(|l| l.contains("pto.comm.tput(")).unwrap().to_string();
    let tys: Vec<&str> =
        l.split(" : ").nth(1).unwrap().split(", !pto.tile_buf").next().unwrap().split(", ").collect();
    assert_eq!(tys, ["!pto.partition_tensor_view<?x64xf32>", "!pto.partition_tensor_view<?x64xf32>"]);
    let text = full();
    for l in text.lines().filter(|l| l.contains("pto.comm.tput(") || l.contains("pto.comm.tget(")) {
        let tys: Vec<&str> = l.split(" : ").nth(1).unwrap().split(", ").take(2).collect();
        assert_eq!(tys[0], tys[1], "{l}");
    }
}

#[test]
fn v3_staging_tiles_are_static_vec_tiles_of_the_transfer_dtype() {
    init();
    let bad_mem = kernel(
        "k",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[16, 64], DataType::FP32)),
            ("src", dist(&[16, 64], DataType::FP32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let s = stage(b, "st", &[4, 64], DataType::FP32, "Mat")?;
            b.eval_op("pld.tile.put", vec![v(p[0]), v(p[2]), v(p[1]), v(s)], vec![("atomic", ai(0))])?;
            Ok(())
        },
    );
    let msgs = errors(&program(vec![bad_mem]), Target::A2A3);
    assert!(msgs[0].contains("pld.tile.put stage must be a VEC staging tile"), "{msgs:?}");
    let mixed_pair = kernel(
        "k",
        FunctionKind::Aiv,
        &[
            ("dst", dist(&[16, 64], DataType::FP32)),
            ("src", dist(&[16, 64], DataType::FP32)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let s = stage(b, "ping", &[4, 64], DataType::FP32, "Vec")?;
            let t = stage(b, "pong", &[4, 64], DataType::FP32, "Mat")?;
            b.eval_op("pld.tile.get", vec![v(p[1]), v(p[2]), v(p[0]), v(s), v(t)], vec![])?;
            Ok(())
        },
    );
    let msgs = errors(&program(vec![mixed_pair]), Target::A2A3);
    assert!(msgs[0].contains("pld.tile.get stage2 must be a VEC staging tile"), "{msgs:?}");
    for l in full().lines().filter(|l| l.contains("pto.comm.tput") || l.contains("pto.comm.tget")) {
        assert!(l.contains("!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64"), "{l}");
    }
}

#[test]
fn v4_signals_are_static_i32_cells() {
    init();
    let f = kernel(
        "k",
        FunctionKind::Aiv,
        &[("sig", dist(&[2, 1], DataType::FP32)), ("peer", Type::Scalar(DataType::INT32))],
        |b, p| {
            b.eval_op(
                "pld.system.notify",
                vec![v(p[0]), v(p[1]), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(1))],
            )?;
            Ok(())
        },
    );
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert!(
        msgs[0].contains("pld.system.notify signal 'sig' has dtype fp32; ptoas requires an int32 signal"),
        "{msgs:?}"
    );
    for l in full().lines().filter(|l| l.contains("pto.comm.tnotify") || l.contains("pto.comm.twait")) {
        assert!(l.contains(": !pto.partition_tensor_view<1x1xi32>, i32)"), "{l}");
    }
}

#[test]
fn v5_notify_and_wait_always_carry_their_mode() {
    let text = full();
    for l in text.lines() {
        if l.contains("pto.comm.tnotify") {
            assert!(l.contains("{notifyOp = #pto<notify_op "), "{l}");
        }
        if l.contains("pto.comm.twait") {
            assert!(l.contains("{cmp = #pto<wait_cmp "), "{l}");
        }
    }
    assert_eq!(count(&text, "notifyOp"), 1);
    assert_eq!(count(&text, "{cmp ="), 1);
}

// ---------------------------------------------------------------------------------------
// Verifier level (views, data movement)
// ---------------------------------------------------------------------------------------

#[test]
fn v6_make_tensor_view_counts_match_rank() {
    for l in full().lines().filter(|l| l.contains("pto.make_tensor_view")) {
        let rank = l.rsplit("tensor_view<").next().unwrap().matches('?').count();
        let shape = l.split("shape = [").nth(1).unwrap().split(']').next().unwrap().split(", ").count();
        let strides = l.split("strides = [").nth(1).unwrap().split(']').next().unwrap().split(", ").count();
        assert_eq!((shape, strides), (rank, rank), "{l}");
    }
}

#[test]
fn v7_partition_offsets_are_clamped_and_sizes_fit() {
    init();
    let f = kernel(
        "k",
        FunctionKind::Aiv,
        &[("x", tensor(&[16, 64], DataType::FP32)), ("o", Type::Scalar(DataType::INT32))],
        |b, p| {
            let off = Expr::binary(BinOp::Sub, v(p[1]), Expr::int(1));
            b.assign_op(
                "t",
                "tile.load",
                vec![v(p[0]), Expr::tuple(vec![off, Expr::int(0)]), ints(&[1, 64])],
                vec![],
            )?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(only(&out), "CHECK: = arith.subi %arg1, %c1_i32 : i32\nCHECK: arith.maxsi\nCHECK-SAME: %c0_index : index\nCHECK-NEXT: %x_pview = pto.partition_view\nCHECK-SAME: sizes = [%c1_index, %c64_index]\nCHECK-SAME: -> !pto.partition_tensor_view<1x64xf32>");
    for l in full().lines().filter(|l| l.contains("pto.partition_view")) {
        let sizes = l.split("sizes = [").nth(1).unwrap().split(']').next().unwrap();
        let ty = l.rsplit("partition_tensor_view<").next().unwrap();
        for (s, d) in sizes.split(", ").zip(ty.split('x')) {
            let n = s.trim_start_matches("%c").trim_end_matches("_index");
            assert_eq!(n, d, "a constant size must equal the static result dim: {l}");
        }
    }
}

#[test]
fn v8_pointer_ops_keep_their_types() {
    let text = full();
    for l in text.lines() {
        if l.contains("pto.load_scalar") {
            assert!(l.ends_with(": !pto.ptr<i64> -> i64"), "{l}");
        }
        if l.contains("pto.addptr") {
            let ty = l.rsplit(" : ").next().unwrap();
            let (a, b) = ty.split_once(" -> ").unwrap();
            assert_eq!(a, b, "{l}");
        }
    }
}

#[test]
fn v9_tload_destinations_are_vec_or_mat_and_no_fp8_on_a2a3() {
    init();
    let acc = kernel("k", FunctionKind::Aiv, &[("x", tensor(&[16, 16], DataType::FP32))], |b, p| {
        b.assign_op(
            "t",
            "tile.load",
            vec![v(p[0]), ints(&[0, 0]), ints(&[16, 16])],
            vec![("target_memory", Attr::Str("Acc".into()))],
        )?;
        Ok(())
    });
    let msgs = errors(&program(vec![acc]), Target::A2A3);
    assert!(
        msgs[0].contains(
            "tile.load loads into a Acc tile; ptoas accepts a tload destination only in vec or mat"
        ),
        "{msgs:?}"
    );
    let fp8 = kernel("k", FunctionKind::Aiv, &[("x", tensor(&[16, 32], DataType::FP8E4M3FN))], |b, p| {
        b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[16, 32])], vec![])?;
        Ok(())
    });
    let p = program(vec![fp8]);
    let msgs = errors(&p, Target::A2A3);
    assert!(msgs[0].contains("not supported on the 'a2a3' backend"), "{msgs:?}");
    let a5 = emit_for(&p, Target::A5).unwrap();
    assert!(only(&a5).contains("dtype=f8E4M3FN"));
}

#[test]
fn v10_tstore_counts_sources_and_atomic_dtypes() {
    init();
    // Ragged tile: the store's static element count is the tile's valid count (17), not 8192.
    let f = kernel(
        "k",
        FunctionKind::Aiv,
        &[("x", tensor(&[1, 8192], DataType::FP32)), ("y", tensor(&[1, 8192], DataType::FP32))],
        |b, p| {
            let t = b.assign_op(
                "t",
                "tile.load",
                vec![v(p[0]), ints(&[0, 0]), ints(&[1, 8192]), ints(&[1, 17])],
                vec![],
            )?;
            b.assign_op("y2", "tile.store", vec![v(t), ints(&[0, 0]), v(p[1])], vec![])?;
            Ok(())
        },
    );
    check(
        only(&emit(&program(vec![f]))),
        "CHECK: pto.tstore\nCHECK-SAME: !pto.partition_tensor_view<1x17xf32>",
    );
    // bf16 atomic add: accepted on a2a3, refused on a5.
    let bf = kernel(
        "k",
        FunctionKind::Aiv,
        &[
            ("x", tensor(&[8, 32], DataType::BF16)),
            ("win", dist(&[8, 32], DataType::BF16)),
            ("peer", Type::Scalar(DataType::INT32)),
        ],
        |b, p| {
            let t = b.assign_op("t", "tile.load", vec![v(p[0]), ints(&[0, 0]), ints(&[8, 32])], vec![])?;
            b.eval_op(
                "pld.tile.remote_store",
                vec![v(t), v(p[1]), v(p[2]), ints(&[0, 0])],
                vec![("atomic", ai(1))],
            )?;
            Ok(())
        },
    );
    let p = program(vec![bf]);
    assert!(only(&emit(&p)).contains("{atomicType = #pto<atomic_type atomic_add>}"));
    let msgs = errors(&p, Target::A5);
    assert!(msgs[0].contains("into a bf16 window is not supported on the 'a5' backend"), "{msgs:?}");
    // A Mat source cannot be stored on a5.
    let mat = kernel("k", FunctionKind::Aiv, &[("x", tensor(&[16, 16], DataType::FP32))], |b, p| {
        let t = b.assign_op(
            "t",
            "tile.load",
            vec![v(p[0]), ints(&[0, 0]), ints(&[16, 16])],
            vec![("target_memory", Attr::Str("Mat".into()))],
        )?;
        b.assign_op("o", "tile.store", vec![v(t), ints(&[0, 0]), v(p[0])], vec![])?;
        Ok(())
    });
    let msgs = errors(&program(vec![mat]), Target::A5);
    assert!(msgs[0].contains("tile.store stores from a Mat tile"), "{msgs:?}");
}

#[test]
fn v11_region_cacheinvalid_goes_through_a_partition_view() {
    init();
    let f = kernel("k", FunctionKind::Aiv, &[("win", dist(&[4, 64], DataType::FP32))], |b, p| {
        b.eval_op("system.cacheinvalid", vec![v(p[0]), ints(&[4, 64]), ints(&[0, 0])], vec![])?;
        Ok(())
    });
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        "CHECK: %win_pview = pto.partition_view %win_view, offsets = [%c0_index, %c0_index], sizes = [%c4_index, %c64_index]\nCHECK-NEXT: pto.cmo.cacheinvalid %win_pview single_cache_line : !pto.partition_tensor_view<4x64xf32>",
    );
    for l in full().lines().filter(|l| l.contains("pto.cmo.cacheinvalid")) {
        assert!(
            l.contains("single_cache_line : !pto.partition_tensor_view<")
                || l.ends_with("all #pto.address_space<gm>"),
            "{l}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Structural / lowering
// ---------------------------------------------------------------------------------------

#[test]
fn c1_no_helper_functions_and_no_calls() {
    let text = full();
    assert_no_helpers(&text);
    assert!(!text.contains("func.call"));
    assert_eq!(count(&text, "func.func"), 1);
    init();
    // A kernel calling another function is refused rather than emitting a helper.
    let mut f = kernel("k", FunctionKind::Aiv, &[], |_, _| Ok(()));
    let call = pld_ir::Builder::new(&mut f.values, FunctionKind::Aiv).func_call(
        "helper",
        vec![],
        None,
        Type::Unknown,
    );
    f.body.stmts.push(pld_ir::Stmt::new(pld_ir::StmtKind::Eval(call), pld_ir::Span::DUMMY));
    let msgs = errors(&program(vec![f]), Target::A2A3);
    assert!(msgs[0].contains("kernel 'k' calls function 'helper'"), "{msgs:?}");
}

#[test]
fn c2_addptr_feeds_make_tensor_view_in_the_same_function() {
    let text = full();
    assert_peer_sequences(&text, 5);
    assert!(text.lines().filter(|l| l.trim() == "return").count() == 1);
    assert!(!text.contains("return %"));
}

#[test]
fn c3_comm_operands_come_from_views_and_allocations() {
    let text = full();
    let d = defs(&text);
    for l in text.lines().filter(|l| l.contains("pto.comm.t")) {
        let args = &l[l.find('(').unwrap() + 1..l.find(" : ").unwrap()];
        for a in args.replace("buf(", "").replace(')', "").split(", ") {
            if a.starts_with("%c") {
                continue; // the i32 value operand of notify/wait
            }
            let def = &d[a];
            assert!(
                def.contains("pto.partition_view") || def.contains("pto.alloc_tile"),
                "{a} in `{l}` is defined by `{def}`"
            );
        }
    }
}

#[test]
fn c4_signature_follows_the_runtime_argument_order() {
    init();
    // Declared in a scrambled order: scalar, window, plain tensor with a dynamic dim, scalar.
    let xt = Type::tensor(vec![Expr::sym("M"), Expr::int(32)], DataType::FP32);
    let f = kernel(
        "order",
        FunctionKind::Aiv,
        &[
            ("peer", Type::Scalar(DataType::INT32)),
            ("sig", dist(&[4, 4], DataType::INT32)),
            ("x", xt),
            ("scale", Type::Scalar(DataType::FP32)),
        ],
        |b, p| {
            b.eval_op(
                "pld.system.notify",
                vec![v(p[1]), v(p[0]), ints(&[0, 0]), Expr::int(1)],
                vec![("op", ai(0))],
            )?;
            b.eval_op(
                "pld.system.defer_wait",
                vec![v(p[1]), ints(&[0, 0]), Expr::int(1)],
                vec![("cmp", ai(1))],
            )?;
            b.assign_op("t", "tile.load", vec![v(p[2]), ints(&[0, 0]), ints(&[8, 32])], vec![])?;
            Ok(())
        },
    );
    let out = emit(&program(vec![f]));
    check(
        only(&out),
        "CHECK: func.func @order(%arg0: !pto.ptr<i32>, %arg1: !pto.ptr<f32>, %arg2: i32, %arg3: f32, %arg4: !pto.ptr<i64>, %arg5: index, %__pypto_deferred_raw_args: !pto.ptr<i64>) attributes",
    );
}

#[test]
fn c5_barriers_and_invalidates_around_comm_ops() {
    let text = full();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("pto.comm.tnotify") {
            assert_eq!(lines[i - 1], "pto.barrier <PIPE_ALL>");
        }
        if l.starts_with("pto.comm.tput") || l.starts_with("pto.comm.tget") {
            assert_eq!(lines[i - 1], "pto.barrier <PIPE_ALL>");
            assert_eq!(lines[i + 1], "pto.barrier <PIPE_ALL>");
        }
        if l.starts_with("pto.comm.tput") {
            let dst = l["pto.comm.tput(".len()..].split(',').next().unwrap();
            assert!(
                lines[i + 2].starts_with(&format!("pto.cmo.cacheinvalid {dst} single_cache_line")),
                "{}",
                lines[i + 2]
            );
        }
        if l.starts_with("pto.tstore") && l.contains("peer_pview") {
            assert!(lines[i + 1].starts_with("pto.cmo.cacheinvalid"));
        }
    }
}
