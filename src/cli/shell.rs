//! `lance-csr shell`: a REPL with history and multi-line input (a query ends with `;`).

use crate::error::Result;
use crate::output::{render, Format};
use crate::planner::Params;
use crate::session::Graph;
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::time::Instant;

const HELP: &str = "\
Enter a query ending with `;` (it may span several lines). Commands:
  :explain QUERY;   show the plans of QUERY
  :timing           toggle printing the time each query takes
  :format F         table, csv or json
  :param NAME=VAL   set a parameter (a Cypher literal), :params lists them
  :help             this text
  :quit             leave (or Ctrl-D)";

pub async fn run(graph: &Graph) -> Result<()> {
    let mut rl = DefaultEditor::new().map_err(|e| crate::Error::Other(e.to_string()))?;
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".lance_csr_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!(
        "lance-csr shell. {} labels, {} relationship tables. :help for help.",
        graph.catalog().nodes.len(),
        graph.catalog().rels.len()
    );
    let mut timing = false;
    let mut format = Format::Table;
    let mut params = Params::new();
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() {
            "cypher> "
        } else {
            "   ...> "
        };
        let line = match rl.readline(prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => {
                buf.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(crate::Error::Other(e.to_string())),
        };
        let trimmed = line.trim();
        if buf.is_empty() && trimmed.starts_with(':') && !trimmed.starts_with(":explain") {
            let _ = rl.add_history_entry(trimmed);
            let (cmd, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            match cmd {
                ":quit" | ":q" | ":exit" => break,
                ":help" | ":h" => println!("{HELP}"),
                ":timing" => {
                    timing = !timing;
                    println!("timing {}", if timing { "on" } else { "off" });
                }
                ":format" => match rest.trim().parse() {
                    Ok(f) => format = f,
                    Err(e) => println!("{e}"),
                },
                ":param" => match crate::session::parse_param(rest) {
                    Ok((k, v)) => {
                        params.insert(k, v);
                    }
                    Err(e) => println!("{e}"),
                },
                ":params" => {
                    for (k, v) in &params {
                        println!("${k} = {v}");
                    }
                }
                other => println!("unknown command {other}; :help lists commands"),
            }
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        if !trimmed.ends_with(';') {
            continue;
        }
        let text = std::mem::take(&mut buf);
        let _ = rl.add_history_entry(text.trim());
        let text = text.trim().trim_end_matches(';').to_string();
        let t = Instant::now();
        if let Some(q) = text.strip_prefix(":explain") {
            match graph.explain(q, &params).await {
                Ok(s) => println!("{s}"),
                Err(e) => println!("{}", e.render(q)),
            }
        } else {
            match graph.query(&text, &params).await {
                Ok(r) => print!("{}", render(&r, format)),
                Err(e) => println!("{}", e.render(&text)),
            }
        }
        if timing {
            println!("time: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}
