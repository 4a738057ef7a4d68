//! scratch
use pld_bench::*;
use std::time::Instant;
fn main() {
    init().unwrap();
    for scale in [1usize, 10] {
        let text = gen::program(scale);
        let t = Instant::now();
        let mut p = parse(&text).unwrap();
        let t1 = t.elapsed();
        let n = count_stmts(&p);
        lower(&mut p).unwrap();
        let t2 = t.elapsed();
        let e = emit(&p).unwrap();
        let t3 = t.elapsed();
        println!("scale {scale} stmts {n} -> {} parse {t1:?} pipe {t2:?} emit {t3:?} ({e})", count_stmts(&p));
    }
    for c in coll::Coll::ALL {
        for bytes in [4096u64, 1 << 20] {
            let w = coll::Workload::new(c, 4, bytes);
            let p = compile(&w.text()).unwrap_or_else(|e| panic!("{}\n{e}", w.text()));
            let t = Instant::now();
            let o = simulate(&p, &w.inputs(), &w.config(pld_sim::Schedule::Deterministic)).unwrap();
            println!("{c:?} {bytes} {:?} steps {} {:?}", t.elapsed(), o.stats.steps, o.stats.remote_bytes.keys().collect::<Vec<_>>());
        }
    }
}
