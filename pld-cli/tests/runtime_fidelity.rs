//! The runtime directory against Simpler's real behaviour (issue #28, Simpler at the commit
//! PyPTO pins, 93adc3865e65): kernels take their block identity as parameters (the CCE
//! built-ins are stale under Simpler's dispatch), host callbacks load, pickle and read their
//! arguments the way Simpler's `Worker` and `MappedArgs` do, dtypes arrive as `DataType`
//! integers, and pure `OUT` tensors are not staged (their unwritten bytes are undefined).

mod runtime_support;

use pld_testkit::runtime_decls;
use runtime_support::*;
use std::process::Command;

fn checker(dir: &std::path::Path, ranks: usize) -> (bool, String) {
    let out = Command::new("python3")
        .arg(runtime_decls::checker())
        .arg(dir)
        .arg(ranks.to_string())
        .output()
        .unwrap();
    (
        out.status.success() && text(&out.stdout).trim() == "ok",
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
fn multi_block_kernels_take_their_block_id_as_trailing_parameters() {
    let dir = out_dir("block-ids");
    let out = emit("examples/host_collectives.py", &dir, &["--ptoas", s(&runtime_decls::fake_ptoas())]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_dir(&dir, 2);
    assert_compiles(&dir);
    let variant = dir.join("next_levels/builtin.tensor.allreduce__sum__fp32");
    let name = "builtin_tensor_allreduce__sum__fp32_kernel";
    let pto = std::fs::read_to_string(variant.join(format!("ptoas/{name}.pto"))).unwrap();
    // No hardware block-id read anywhere: Simpler leaves those registers stale.
    assert!(!pto.contains("pto.get_block_idx") && !pto.contains("pto.get_block_num"), "{pto}");
    assert!(
        pto.contains("%__pypto_spmd_block_idx: i32, %__pypto_spmd_block_num: i32) attributes"),
        "the block id is the signature's tail: {pto}"
    );
    assert!(pto.contains("arith.index_cast %__pypto_spmd_block_idx : i32 to index"), "{pto}");
    let w = std::fs::read_to_string(variant.join(format!("kernels/aiv/{name}.cpp"))).unwrap();
    assert!(w.contains("#include \"intrinsic.h\""), "{w}");
    assert!(
        w.contains("    int32_t __pypto_spmd_block_idx = get_block_idx(args);\n    int32_t __pypto_spmd_block_num = get_block_num(args);\n"),
        "{w}"
    );
    assert!(w.contains("signal_dim0, __pypto_spmd_block_idx, __pypto_spmd_block_num);"), "{w}");
    // A kernel that does not use its block id gets neither (the user chip's kernels here).
    for f in std::fs::read_dir(dir.join("next_levels")).unwrap().flatten() {
        if f.file_name().to_string_lossy().starts_with("builtin.tensor.allreduce") {
            continue;
        }
        for p in std::fs::read_dir(f.path().join("ptoas")).unwrap().flatten() {
            let t = std::fs::read_to_string(p.path()).unwrap();
            assert!(!t.contains("__pypto_spmd_block"), "{}: {t}", p.path().display());
        }
    }
    // The checker holds the runtime's rule: the old form (the built-in read in the module) and
    // a wrapper that does not pass the context values are both rejected (M11).
    let unit = variant.join(format!("ptoas/{name}.pto"));
    std::fs::write(
        &unit,
        pto.replacen("arith.index_cast %__pypto_spmd_block_idx : i32 to index", "pto.get_block_idx", 1),
    )
    .unwrap();
    let (ok, msg) = checker(&dir, 2);
    assert!(!ok && msg.contains("M11") && msg.contains("reads pto.get_block_idx"), "{msg}");
    std::fs::write(&unit, &pto).unwrap();
    let wrapper = variant.join(format!("kernels/aiv/{name}.cpp"));
    std::fs::write(&wrapper, w.replace("get_block_num(args)", "0")).unwrap();
    let (ok, msg) = checker(&dir, 2);
    assert!(!ok && msg.contains("M11") && msg.contains("does not pass get_block_idx(args)"), "{msg}");
}
