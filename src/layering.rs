//! The dependency rules of docs/ARCHITECTURE.md ("What may import what"), checked on the
//! sources: a file of `src`, or under a folder of it, that refers to a path its layer may
//! not reach fails this test; and the bound on a source file's length.

use std::path::{Path, PathBuf};

/// `(folder or file of src, path no file in it may refer to)`.
const RULES: &[(&str, &str)] = &[
    // The rules: no web framework, no SQL, no use case or process state.
    ("domain", "axum"),
    ("domain", "crate::error"), // ApiError and ErrorCode are HTTP answers (axum's StatusCode)
    ("domain", "crate::http"),
    ("domain", "crate::store"),
    ("domain", "crate::usecase"),
    ("domain", "crate::state"),
    // The authorization server's logic, without a web framework.
    ("oauth", "axum"),
    ("oauth", "crate::http"),
    ("oauth", "crate::usecase"),
    ("oauth", "crate::state"),
    ("oauth", "crate::store"), // decisions over records; usecase::authorization runs them
    // The use cases: typed outcomes and domain errors, no HTTP answers.
    ("usecase", "axum"),
    ("usecase", "crate::http"),
    ("usecase", "crate::error"),
    ("usecase", "crate::state"),
    // Images without HTTP or SQL: the blob store, the upload checks, the renditions, the
    // import's downloader (a process service like mail, below the use cases).
    ("images", "axum"),
    ("images", "crate::error"),
    ("images", "crate::http"),
    ("images", "crate::usecase"),
    ("images", "crate::state"),
    ("images", "crate::store"),
    // The queries: below everything but the domain.
    ("store", "axum"),
    ("store", "crate::http"),
    ("store", "crate::error"),
    ("store", "crate::usecase"),
    ("store", "crate::state"),
    // The process state and the token cache that HTTP and the command line share: no
    // HTTP type (the OpenAPI document is the router's own state, `http::HttpState`).
    ("state.rs", "crate::http"),
    ("state.rs", "axum"),
    ("access.rs", "crate::http"),
    ("access.rs", "axum"),
];

/// The places in `code` that refer to `path` (`crate::store` or a crate such as `axum`):
/// `path::...`, `use path;`, or a name in a `crate::{...}` group; comments do not count.
fn references(code: &str, path: &str) -> Vec<usize> {
    let (parent, name) = path.rsplit_once("::").unwrap_or(("", path));
    let mut found = Vec::new();
    let mut in_group = false;
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .filter(|w| !w.is_empty())
            .collect();
        let direct = words
            .iter()
            .any(|w| *w == path || w.starts_with(&format!("{path}::")));
        // `use crate::{error::ApiError, store};`, possibly over several lines.
        if !parent.is_empty() && line.contains(&format!("{parent}::{{")) {
            in_group = true;
        }
        let grouped = in_group
            && words.iter().any(|w| {
                let w = w.strip_prefix(&format!("{parent}::")).unwrap_or(w);
                w == name || w.starts_with(&format!("{name}::"))
            });
        if in_group && line.contains('}') {
            in_group = false;
        }
        if direct || grouped {
            found.push(number + 1);
        }
    }
    found
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn layers_reach_only_what_they_may() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    for (place, forbidden) in RULES {
        let mut files = Vec::new();
        let place_path = src.join(place);
        if place_path.is_file() {
            files.push(place_path);
        } else {
            rust_files(&place_path, &mut files);
        }
        assert!(!files.is_empty(), "src/{place} has no files");
        for file in files {
            let code = std::fs::read_to_string(&file).expect("a source file");
            for line in references(&code, forbidden) {
                broken.push(format!("{}:{line} refers to {forbidden}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// A file this long holds several things, each harder to find (docs/ARCHITECTURE.md).
const MOST_LINES: usize = 700;

#[test]
fn no_source_file_is_over_the_bound() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    let long: Vec<String> = files
        .iter()
        .map(|file| {
            let code = std::fs::read_to_string(file).expect("a source file");
            (file, code.lines().count())
        })
        .filter(|(_, lines)| *lines > MOST_LINES)
        .map(|(file, lines)| format!("{}: {lines} lines", file.display()))
        .collect();
    assert!(
        long.is_empty(),
        "over {MOST_LINES} lines: {}",
        long.join(", ")
    );
}

#[test]
fn the_check_finds_references() {
    let code = "use axum::http::StatusCode;\n\
                // crate::store in a comment\n\
                use crate::{\n    domain::user::Email,\n    store::Db,\n};\n\
                fn f() { crate::http::router(); }\n\
                use crate::storefront;\n";
    assert_eq!(references(code, "axum"), [1]);
    assert_eq!(references(code, "crate::store"), [5]);
    assert_eq!(references(code, "crate::http"), [7]);
    assert!(references("use crate::domain::user::Email;", "crate::store").is_empty());
}
