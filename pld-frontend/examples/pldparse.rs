//! Debug helper: parses a DSL file and prints the program(s) or the rendered diagnostics.

fn main() {
    let _ = pld_ops::registry();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut sm = pld_ir::SourceMap::new();
        match pld_frontend::parse_programs(&mut sm, &path, &text, &pld_frontend::ParseOptions::default()) {
            Ok(ps) => {
                for p in ps {
                    println!("{}", pld_ir::print_program(&p));
                    if let Err(d) = pld_ir::verify_program(&p) {
                        println!("VERIFY: {}", d.render(&sm));
                    }
                }
            }
            Err(d) => println!("{}", d.render(&sm)),
        }
    }
}
