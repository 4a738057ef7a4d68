//! pld-sim's module graph is circle-free: every top-level module of `pld-sim/src` sits in one
//! of the layers declared by the layer table of docs/ARCHITECTURE.md (the one list, read by
//! [`parse_layers`], bottom first), and a module names only modules of
//! lower layers (`crate::x`, `$crate::x`, `super::…::x` reaching the crate root, and crate-root
//! names resolved through `lib.rs`'s re-exports and `#[macro_export]` macros). The files of one
//! top-level module may name each other; two modules of one layer may not name each other;
//! `lib.rs` sits above every layer. Test code counts: a `#[cfg(test)]` module's imports are the
//! module's imports.
//!
//! Guarantees: a new top-level module that no layer lists fails this test, and so does a layer
//! entry naming no module or a table cell that is not a list of backticked module names; a failure names the file, the line and the path that runs upward.
//! Reads source text only (tokens, so comments and strings never count).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Where the layers are declared: the table after this heading line in docs/ARCHITECTURE.md.
const TABLE_AFTER: &str = "Inside `pld-sim` the top-level modules form layers";

/// The layers of pld-sim, bottom first, each a name and its modules: a module may name modules
/// of the layers before its own (docs/DECISIONS.md D-sim-33 says why).
type Layers = Vec<(String, Vec<String>)>;

/// The layer table of docs/ARCHITECTURE.md: the `| layer | modules |` table after
/// [`TABLE_AFTER`]. A modules cell is a comma-separated list of backticked module names, each
/// optionally followed by a parenthesized remark (skipped, nesting counted); anything else in
/// the cell is an error naming the row, so the table cannot drift into prose the test ignores.
fn parse_layers(doc: &str) -> Result<Layers, String> {
    let at = doc.find(TABLE_AFTER).ok_or_else(|| format!("no line starting `{TABLE_AFTER}`"))?;
    let mut lines = doc[at..].lines().skip_while(|l| !l.starts_with('|'));
    let header = lines.next().ok_or("no table after the heading line")?;
    let cells =
        |l: &str| l.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect::<Vec<_>>();
    if cells(header) != ["layer", "modules"] {
        return Err(format!("the table's header is `{header}`, not `| layer | modules |`"));
    }
    let mut layers = Vec::new();
    for row in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let [name, modules] =
            <[String; 2]>::try_from(cells(row)).map_err(|_| format!("row `{row}`: not two cells"))?;
        let mut bare = String::new();
        let mut depth = 0usize;
        for c in modules.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.checked_sub(1).ok_or_else(|| format!("row `{row}`: an unopened `)`"))?,
                _ if depth == 0 => bare.push(c),
                _ => {}
            }
        }
        let mut ms = Vec::new();
        for item in bare.split(',').map(str::trim) {
            let m = item.strip_prefix('`').and_then(|i| i.strip_suffix('`'));
            match m {
                Some(m) if !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                    ms.push(m.to_string())
                }
                _ => return Err(format!("row `{row}`: `{item}` is not a backticked module name")),
            }
        }
        layers.push((name, ms));
    }
    if layers.is_empty() {
        return Err("the layer table has no rows".to_string());
    }
    Ok(layers)
}

/// The layers as docs/ARCHITECTURE.md declares them.
fn layers() -> Layers {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&path).expect("readable docs/ARCHITECTURE.md");
    parse_layers(&doc).unwrap_or_else(|e| panic!("docs/ARCHITECTURE.md, pld-sim's layer table: {e}"))
}

/// One upward path: the file and line it is written at, the importing and imported modules.
#[derive(Debug)]
struct Edge {
    file: String,
    line: usize,
    from: String,
    to: String,
    path: String,
}

/// The module path of a source file (`src/world/signal.rs` → `[world, signal]`, `src/lib.rs` → `[]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && !(parts.is_empty() && stem == "lib") {
        parts.push(stem.to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).expect("readable src").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn tokens(file: &Path) -> TokenStream {
    let text = std::fs::read_to_string(file).expect("readable source");
    TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{}: does not tokenize: {e}", file.display()))
}

fn is_ident(t: Option<&TokenTree>, name: &str) -> bool {
    matches!(t, Some(TokenTree::Ident(i)) if i == name)
}

fn is_path_sep(ts: &[TokenTree], i: usize) -> bool {
    matches!((ts.get(i), ts.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':')
}

/// The first name of each item of a `{…}` use group (`{a::b, c}` → `a`, `c`).
fn group_heads(g: &TokenStream) -> Vec<String> {
    let ts: Vec<TokenTree> = g.clone().into_iter().collect();
    let mut heads = Vec::new();
    let mut at_start = true;
    for t in &ts {
        match t {
            TokenTree::Punct(p) if p.as_char() == ',' => at_start = true,
            TokenTree::Ident(i) if at_start => {
                heads.push(i.to_string());
                at_start = false;
            }
            _ => at_start = false,
        }
    }
    heads
}

/// A crate-root name found in a file: (line, the name, the path text).
type RootName = (usize, String, String);

/// Every name the token stream takes from the crate root, with `modpath` the module the
/// stream is in (inline `mod x { … }` blocks extend it).
fn root_names(ts: TokenStream, modpath: &[String], out: &mut Vec<RootName>) {
    let ts: Vec<TokenTree> = ts.into_iter().collect();
    let mut i = 0;
    while i < ts.len() {
        if is_ident(ts.get(i), "mod") {
            if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) = (ts.get(i + 1), ts.get(i + 2))
            {
                if g.delimiter() == Delimiter::Brace {
                    let mut inner = modpath.to_vec();
                    inner.push(name.to_string());
                    root_names(g.stream(), &inner, out);
                    i += 3;
                    continue;
                }
            }
        }
        let (ups, start) = if is_ident(ts.get(i), "crate") && is_path_sep(&ts, i + 1) {
            (None, i + 3)
        } else if is_ident(ts.get(i), "super") && !(i >= 2 && is_path_sep(&ts, i - 2)) {
            let mut n = 0;
            let mut j = i;
            while is_ident(ts.get(j), "super") && is_path_sep(&ts, j + 1) {
                n += 1;
                j += 3;
            }
            (Some(n), j)
        } else {
            (None, usize::MAX)
        };
        let reaches_root = match ups {
            None => start != usize::MAX,
            Some(n) => n > 0 && n >= modpath.len(),
        };
        if reaches_root {
            let line = ts[i].span().start().line;
            let lead = if ups.is_some() { "super::" } else { "crate::" };
            match ts.get(start) {
                Some(TokenTree::Ident(name)) => out.push((line, name.to_string(), format!("{lead}{name}"))),
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                    for h in group_heads(&g.stream()) {
                        out.push((line, h.clone(), format!("{lead}{{{h}, …}}")));
                    }
                }
                _ => {}
            }
        }
        if let TokenTree::Group(g) = &ts[i] {
            root_names(g.stream(), modpath, out);
        }
        i += 1;
    }
}

/// What a crate-root name is: a top-level module, a name `lib.rs` re-exports from one, a
/// `#[macro_export]` macro of one, an external crate (`None`), or an item of `lib.rs`.
struct Root {
    modules: BTreeSet<String>,
    reexports: BTreeMap<String, Option<String>>,
    macros: BTreeMap<String, String>,
}

impl Root {
    fn owner(&self, name: &str) -> Option<String> {
        if self.modules.contains(name) {
            return Some(name.to_string());
        }
        if let Some(m) = self.macros.get(name) {
            return Some(m.clone());
        }
        match self.reexports.get(name) {
            Some(from) => from.clone(),
            None => Some("lib".to_string()),
        }
    }
}

/// The leaves of `lib.rs`'s `pub use` items: each name with the first segment of its path.
fn reexports(lib: TokenStream, modules: &BTreeSet<String>) -> BTreeMap<String, Option<String>> {
    let ts: Vec<TokenTree> = lib.into_iter().collect();
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < ts.len() {
        if is_ident(ts.get(i), "use") {
            let first = match ts.get(i + 1) {
                Some(TokenTree::Ident(f)) => f.to_string(),
                _ => String::new(),
            };
            let owner = modules.contains(&first).then(|| first.clone());
            let mut j = i + 1;
            let mut last = String::new();
            while j < ts.len() && !matches!(&ts[j], TokenTree::Punct(p) if p.as_char() == ';') {
                match &ts[j] {
                    TokenTree::Ident(n) => last = n.to_string(),
                    TokenTree::Group(g) => {
                        for leaf in group_leaves(&g.stream()) {
                            out.insert(leaf, owner.clone());
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if !last.is_empty() {
                out.insert(last, owner);
            }
            i = j;
        }
        i += 1;
    }
    out
}

/// The last name of each item of a use group (`{a::B, C as D}` → `B`, `D`).
fn group_leaves(g: &TokenStream) -> Vec<String> {
    let mut leaves = Vec::new();
    let mut last = String::new();
    for t in g.clone() {
        match t {
            TokenTree::Punct(p) if p.as_char() == ',' => leaves.push(std::mem::take(&mut last)),
            TokenTree::Ident(n) => last = n.to_string(),
            TokenTree::Group(inner) => leaves.extend(group_leaves(&inner.stream())),
            _ => {}
        }
    }
    leaves.push(last);
    leaves.retain(|l| !l.is_empty() && l != "self");
    leaves
}

/// `#[macro_export] macro_rules! name` in the stream: each name.
fn exported_macros(ts: TokenStream, out: &mut Vec<String>) {
    let ts: Vec<TokenTree> = ts.into_iter().collect();
    for i in 0..ts.len() {
        if let TokenTree::Group(g) = &ts[i] {
            let is_export = g.delimiter() == Delimiter::Bracket && g.stream().to_string() == "macro_export";
            if is_export && is_ident(ts.get(i + 1), "macro_rules") {
                if let Some(TokenTree::Ident(n)) = ts.get(i + 3) {
                    out.push(n.to_string());
                }
            }
            exported_macros(g.stream(), out);
        }
    }
}

fn layer_of(layers: &Layers, module: &str) -> Option<usize> {
    if module == "lib" {
        return Some(layers.len());
    }
    layers.iter().position(|(_, ms)| ms.iter().any(|m| m == module))
}

/// Every path in pld-sim/src that names a module of its own layer or a higher one.
fn upward_edges(layers: &Layers) -> (Vec<Edge>, BTreeSet<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> =
        files.iter().filter_map(|f| module_path(&src, f).first().cloned()).collect();
    let mut macros = BTreeMap::new();
    for f in &files {
        let mut names = Vec::new();
        exported_macros(tokens(f), &mut names);
        let top = module_path(&src, f).first().cloned().unwrap_or_else(|| "lib".to_string());
        macros.extend(names.into_iter().map(|n| (n, top.clone())));
    }
    let root = Root { reexports: reexports(tokens(&src.join("lib.rs")), &modules), modules, macros };
    let mut edges = Vec::new();
    for f in &files {
        let path = module_path(&src, f);
        let from = path.first().cloned().unwrap_or_else(|| "lib".to_string());
        let mut names = Vec::new();
        root_names(tokens(f), &path, &mut names);
        for (line, name, text) in names {
            let Some(to) = root.owner(&name) else { continue };
            if to == from {
                continue;
            }
            let (Some(a), Some(b)) = (layer_of(layers, &from), layer_of(layers, &to)) else { continue };
            if b >= a {
                let file = format!("pld-sim/src/{}", f.strip_prefix(&src).expect("under src").display());
                edges.push(Edge { file, line, from: from.clone(), to, path: text });
            }
        }
    }
    (edges, root.modules)
}

#[test]
fn crate_root_paths_are_found_in_code_and_not_in_comments_or_strings() {
    let text = r#"
        //! crate::doc_comment
        use crate::{alpha, beta::Gamma as G};
        use super::delta;
        fn f() { let _ = "crate::string"; crate::epsilon::f(); /* crate::comment */ }
        mod tests { use super::*; use super::super::zeta; }
    "#;
    let mut names = Vec::new();
    root_names(TokenStream::from_str(text).expect("tokens"), &["m".to_string()], &mut names);
    let found: Vec<&str> = names.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(found, ["alpha", "beta", "delta", "epsilon", "zeta"]);
    let lib = TokenStream::from_str(
        "pub use report::{Report, ReportKind as Kind}; pub use pld_ir; pub use world::Stats;",
    )
    .expect("tokens");
    let modules: BTreeSet<String> = ["report", "world"].iter().map(|s| s.to_string()).collect();
    let re = reexports(lib, &modules);
    assert_eq!(re.get("Kind"), Some(&Some("report".to_string())));
    assert_eq!(re.get("Stats"), Some(&Some("world".to_string())));
    assert_eq!(re.get("pld_ir"), Some(&None));
}

#[test]
fn every_module_sits_in_exactly_one_layer() {
    let layers = layers();
    let (_, modules) = upward_edges(&layers);
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (layer, ms) in &layers {
        for m in ms {
            if !modules.contains(m) {
                problems.push(format!("layer '{layer}' lists `{m}`, which is not a module of pld-sim/src"));
            }
            if !seen.insert(m.as_str()) {
                problems.push(format!("`{m}` is listed in two layers"));
            }
        }
    }
    for m in &modules {
        if !seen.contains(m.as_str()) {
            problems.push(format!(
                "pld-sim/src/{m}: a top-level module no layer lists; add it to pld-sim's layer table in docs/ARCHITECTURE.md"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_module_imports_a_module_of_its_own_layer_or_above() {
    let layers = layers();
    let (edges, _) = upward_edges(&layers);
    let mut problems = Vec::new();
    for e in &edges {
        let (a, b) = (layer_of(&layers, &e.from).unwrap_or(0), layer_of(&layers, &e.to).unwrap_or(0));
        let layer_name = |l: usize| layers.get(l).map_or("lib.rs", |x| x.0.as_str());
        let how = if a == b { "of its own layer" } else { "of a higher layer" };
        problems.push(format!(
            "{}:{}: `{}`: module `{}` (layer {a}, {}) imports `{}`, {how} (layer {b}, {}); move what it names to the layer that owns it",
            e.file, e.line, e.path, e.from, layer_name(a), e.to, layer_name(b)
        ));
    }
    assert!(problems.is_empty(), "{} upward import(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_layer_table_is_read_from_the_document_and_malformed_cells_are_refused() {
    let doc = "prose\nInside `pld-sim` the top-level modules form layers, bottom first:\n\n| layer | modules |\n|---|---|\n| base (no imports) | `a` (with `a/b.rs` (nested)), `c` |\n| top | `d` |\n\nafter";
    let layers = parse_layers(doc).expect("a well-formed table");
    let want: Layers = vec![
        ("base (no imports)".to_string(), vec!["a".to_string(), "c".to_string()]),
        ("top".to_string(), vec!["d".to_string()]),
    ];
    assert_eq!(layers, want);
    let prose = doc.replace("`c` |", "`c` and the rest |");
    let err = parse_layers(&prose).expect_err("prose in a modules cell");
    assert!(err.contains("`c` and the rest` is not a backticked module name"), "{err}");
    let empty = doc.replace("| top | `d` |", "| top | |");
    assert!(parse_layers(&empty).expect_err("an empty cell").contains("row `| top | |`"));
    let missing = doc.replace("Inside `pld-sim`", "Within");
    assert!(parse_layers(&missing).expect_err("no heading").contains("no line starting"));
}
