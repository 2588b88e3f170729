//! The `.cypher` case files under `tests/cases/`: query, expected result or error.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// Rows in this order.
    Ordered(Vec<String>),
    /// Rows in any order.
    Rowsort(Vec<String>),
    /// An error of this kind, raised before execution.
    Error(String),
    /// An error of this kind, raised while executing (`---- runtime-error Kind`).
    RuntimeError(String),
}

#[derive(Debug, Clone)]
pub struct Case {
    pub file: String,
    pub line: usize,
    pub query: String,
    pub params: Vec<String>,
    pub header: String,
    pub expect: Expect,
}

pub fn case_files() -> Vec<PathBuf> {
    let dir = super::project_root().join("tests/cases");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/cases exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cypher"))
        .collect();
    v.sort();
    v
}

pub fn parse_file(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).expect("case file readable");
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut cases = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // Skip blank lines and comments before a case.
        while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with('#')) {
            i += 1;
        }
        if i >= lines.len() {
            break;
        }
        let start = i + 1;
        let mut query = Vec::new();
        let mut params = Vec::new();
        while i < lines.len() && !lines[i].starts_with("----") {
            if let Some(p) = lines[i].strip_prefix("-- param ") {
                params.push(p.trim().to_string());
            } else if !lines[i].starts_with('#') {
                query.push(lines[i]);
            }
            i += 1;
        }
        assert!(i < lines.len(), "{file}:{start}: case without ---- line");
        let mode = lines[i].trim_start_matches('-').trim().to_string();
        i += 1;
        let mut body = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() {
            body.push(lines[i].to_string());
            i += 1;
        }
        let (header, expect) = if let Some(kind) = mode.strip_prefix("runtime-error") {
            (String::new(), Expect::RuntimeError(kind.trim().to_string()))
        } else if let Some(kind) = mode.strip_prefix("error") {
            (String::new(), Expect::Error(kind.trim().to_string()))
        } else {
            let header = body.first().cloned().unwrap_or_default();
            let rows = body.into_iter().skip(1).collect();
            match mode.as_str() {
                "ordered" => (header, Expect::Ordered(rows)),
                "rowsort" => (header, Expect::Rowsort(rows)),
                other => panic!("{file}:{start}: unknown mode {other}"),
            }
        };
        cases.push(Case {
            file: file.clone(),
            line: start,
            query: query.join("\n"),
            params,
            header,
            expect,
        });
    }
    cases
}

pub fn all_cases() -> Vec<Case> {
    case_files().iter().flat_map(|p| parse_file(p)).collect()
}
