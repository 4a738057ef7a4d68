//! The sorted registry listing is checked in: a dropped registration, a rename or a changed
//! flag shows up as a diff of `tests/registry.txt` (rewrite it with `cargo xtask bless`).

#[test]
fn registry_listing_matches_golden() {
    let reg = pld_testkit::init();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/registry.txt");
    pld_testkit::golden::check_file(path, &reg.listing());
}

#[test]
fn every_op_resolves_by_name_and_alias() {
    let reg = pld_testkit::init();
    for r in reg.ops() {
        assert_eq!(reg.lookup(r.def.name).map(|d| d.name), Some(r.def.name));
        for a in r.def.aliases {
            assert_eq!(reg.lookup(a).map(|d| d.name), Some(r.def.name), "alias {a}");
        }
    }
}

#[test]
fn the_pass_vocabulary_names_registered_ops() {
    let reg = pld_testkit::init();
    for name in pld_ir::vocab::ALL {
        assert_eq!(reg.lookup(name).map(|d| d.name), Some(*name), "pld_ir::vocab names unknown op {name}");
    }
}
