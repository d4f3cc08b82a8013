//! Embeds the loader's test corpus (pgrx-tests/corpus/load) into test builds, so the
//! in-database tests need no file access to the source tree.
use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgrx-tests/corpus/load");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut out = String::from("pub static LOAD_CORPUS: &[(&str, &[u8])] = &[\n");
    if std::env::var_os("CARGO_FEATURE_PG_TEST").is_some() && dir.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files {
            println!("cargo:rerun-if-changed={}", f.display());
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if f.is_file() && !name.ends_with(".py") {
                writeln!(
                    out,
                    "    ({name:?}, include_bytes!({:?})),",
                    f.display().to_string()
                )
                .unwrap();
            }
        }
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("load_corpus.rs");
    std::fs::write(dest, out).unwrap();
}
