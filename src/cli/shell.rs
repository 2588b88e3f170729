//! `lance-csr shell`: a REPL with history and multi-line input (a query ends with `;`).

use lance_csr::Format;
use lance_csr::LiveGraph;
use lance_csr::Params;
use lance_csr::Result;
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

pub async fn run(graph: &std::sync::Arc<LiveGraph>) -> Result<()> {
    let mut rl = DefaultEditor::new().map_err(|e| lance_csr::Error::Other(e.to_string()))?;
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".lance_csr_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    outln!(
        "lance-csr shell. {} labels, {} relationship tables. :help for help.",
        graph.current().schema().labels.len(),
        graph.current().schema().relationships.len()
    );
    let mut timing = false;
    let mut format = Format::Table;
    let mut params = Params::new();
    let mut buf = String::new();
    // Whether a query failed: piped input (a script) then exits non-zero.
    let mut failed = false;
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
            Err(e) => return Err(lance_csr::Error::Other(e.to_string())),
        };
        let trimmed = line.trim();
        if buf.is_empty() && trimmed.starts_with(':') && !trimmed.starts_with(":explain") {
            let _ = rl.add_history_entry(trimmed);
            let (cmd, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            match cmd {
                ":quit" | ":q" | ":exit" => break,
                ":help" | ":h" => outln!("{HELP}"),
                ":timing" => {
                    timing = !timing;
                    outln!("timing {}", if timing { "on" } else { "off" });
                }
                ":format" => match rest.trim().parse() {
                    Ok(f) => format = f,
                    Err(e) => outln!("{e}"),
                },
                ":param" => match super::parse::parse_param(rest) {
                    Ok((k, v)) => {
                        params.insert(k, v);
                    }
                    Err(e) => outln!("{e}"),
                },
                ":params" => {
                    for (k, v) in &params {
                        outln!("${k} = {v}");
                    }
                }
                other => outln!("unknown command {other}; :help lists commands"),
            }
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        if !ends_statement(&buf) {
            continue;
        }
        let text = std::mem::take(&mut buf);
        let _ = rl.add_history_entry(text.trim());
        let text = text.trim().trim_end_matches(';').to_string();
        let t = Instant::now();
        // A long session sees what changed in the datasets since the last query (unchanged
        // datasets cost a read of their manifests; changed indexes are rebuilt); a query
        // whose files a writer removes meanwhile runs again on the state after.
        if let Err(e) = graph.refresh().await {
            outln!("warning: cannot refresh the graph: {e}");
        }
        if let Some(q) = text.strip_prefix(":explain") {
            match graph.current().explain(q, &params).await {
                Ok(s) => outln!("{s}"),
                Err(e) => {
                    failed = true;
                    outln!("{}", e.render(q))
                }
            }
        } else {
            // Ctrl-C cancels the running query (dropping it stops its streams) and returns
            // to the prompt; the shell and its history stay.
            let print = async {
                let stream = graph.query_stream(None, &text, params.clone()).await?;
                crate::cli::print_stream(stream, format).await
            };
            let run = tokio::select! {
                r = print => Some(r),
                _ = tokio::signal::ctrl_c() => None,
            };
            match run {
                Some(Ok(())) => {}
                Some(Err(e)) => {
                    failed = true;
                    outln!("{}", e.render(&text))
                }
                None => {
                    failed = true;
                    outln!("query cancelled")
                }
            }
        }
        if timing {
            outln!("time: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    use std::io::IsTerminal;
    if failed && !std::io::stdin().is_terminal() {
        return Err(lance_csr::Error::Other(
            "a query of the script failed".into(),
        ));
    }
    Ok(())
}

/// Whether `text` ends with a `;` that is not inside a string, a backquoted name or a comment.
fn ends_statement(text: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut last = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' && q != '`' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    last = Some(c);
                }
                '/' if chars.peek() == Some(&'/') => {
                    // A line comment: skip to the end of the line.
                    for n in chars.by_ref() {
                        if n == '\n' {
                            break;
                        }
                    }
                }
                c if c.is_whitespace() => {}
                c => last = Some(c),
            },
        }
    }
    quote.is_none() && last == Some(';')
}

#[cfg(test)]
mod tests {
    use super::ends_statement;

    #[test]
    fn a_semicolon_ends_a_statement_only_outside_strings_and_names() {
        assert!(ends_statement("RETURN 1;\n"));
        assert!(ends_statement("RETURN 'a;' ;  "));
        assert!(!ends_statement("RETURN 'a;\n"));
        assert!(!ends_statement("RETURN `x;`"));
        assert!(!ends_statement("RETURN 1 // done;\n"));
        assert!(!ends_statement("RETURN 'it\\'s;"));
        assert!(ends_statement("RETURN 'it\\'s';"));
        assert!(!ends_statement("RETURN 1"));
    }
}
