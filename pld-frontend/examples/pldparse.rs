//! Debug helper: parses DSL files and prints the programs or the rendered diagnostics.
//! `PLD_BIND=n_ranks=2,max_recv=4` binds parameters of program-building Python functions.

fn main() {
    let _ = pld_ops::registry();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut sm = pld_ir::SourceMap::new();
        let mut opts = pld_frontend::ParseOptions::default();
        for kv in std::env::var("PLD_BIND").unwrap_or_default().split(',').filter(|s| !s.is_empty()) {
            if let Some((k, v)) = kv.split_once('=') {
                opts.bindings.push((k.to_string(), v.to_string()));
            }
        }
        match pld_frontend::parse_programs(&mut sm, &path, &text, &opts) {
            Ok(ps) => {
                for p in ps {
                    let printed = pld_ir::print_program(&p);
                    match pld_frontend::parse_str(&printed) {
                        Ok(q) => {
                            if let Err(e) = pld_frontend::structurally_equal(&p, &q) {
                                println!("ROUNDTRIP: {e}");
                            }
                        }
                        Err(d) => println!("ROUNDTRIP: printed form does not parse: {d}"),
                    }
                    println!("{printed}");
                    if let Err(d) = pld_ir::verify_program(&p) {
                        println!("VERIFY: {}", d.render(&sm));
                    }
                }
            }
            Err(d) => println!("{}", d.render(&sm)),
        }
    }
}
