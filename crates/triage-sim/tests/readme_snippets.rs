//! Every TOML snippet in the README parses and builds: a reader copies them as they are.
//! Fragments are completed the way the README presents them (a `[transport]` body, a
//! `[topology]` table, flows without a topology, a `[flows.…]` table of a page load); a snippet of another shape fails the test,
//! so a new one gets a rule here. A sweep plan (`scenario = …`) is parsed as a plan.

mod common;

use common::*;
use triage_sim::scenario::Scenario;

const DUMBBELL: &str = "[topology]\nkind = \"dumbbell\"\nbottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\n\
                        access = { rate = \"1Gbps\", delay = \"0ms\" }\n";
const FLOW: &str = "[[flows]]\nname = \"readme\"\nclient = \"c0\"\nserver = \"s0\"\n";

/// The ```toml blocks of `text`, each with the line it starts on.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim_start() == "```toml" => current = Some((i + 2, String::new())),
            None => {}
            Some(_) if line.trim_start().starts_with("```") => out.push(current.take().unwrap()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unclosed ```toml block");
    out
}

fn has_line(body: &str, prefix: &str) -> bool {
    body.lines().any(|l| l.starts_with(prefix))
}

/// The scenario a snippet stands for.
fn complete(body: &str) -> Option<String> {
    let first = body.lines().find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    // A top-level `name`: before the first table header.
    let named = body.lines().take_while(|l| !l.starts_with('[')).any(|l| l.starts_with("name ="));
    let flows = has_line(body, "[[flows]]");
    let topology = has_line(body, "[topology]");
    Some(match (named, flows, topology) {
        (true, true, _) => body.to_string(),
        // A sub-table of a page-loading flow.
        (false, false, false) if first.starts_with("[flows.") => {
            format!("name = \"readme\"\n{DUMBBELL}{FLOW}page = \"builtin:cats\"\n{body}")
        }
        // The body of `[transport]`.
        (false, false, false) if !first.starts_with('[') => {
            format!("name = \"readme\"\n{DUMBBELL}{FLOW}[transport]\n{body}")
        }
        // A topology: one flow between its first two hosts.
        (false, false, true) => {
            let hosts = body.lines().find_map(|l| l.strip_prefix("hosts = "))?;
            let names: Vec<&str> = hosts.split('"').skip(1).step_by(2).collect();
            format!(
                "name = \"readme\"\n{body}[[flows]]\nname = \"readme\"\nclient = \"{}\"\nserver = \"{}\"\n",
                names[0], names[1]
            )
        }
        // Flows (and transport) over any topology.
        (false, true, false) => format!("name = \"readme\"\n{DUMBBELL}{body}"),
        _ => return None,
    })
}

#[test]
fn every_toml_snippet_in_the_readme_parses_and_builds() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = toml_blocks(&readme);
    assert!(blocks.len() >= 5, "found only {} toml blocks", blocks.len());
    // Relative paths in snippets are written from a scenario in `scenarios/`.
    let dir = repo().join("scenarios");
    for (line, body) in blocks {
        // A sweep plan.
        if body.lines().any(|l| l.starts_with("scenario =") || l.starts_with("scenarios =")) {
            let plan = triage_sim::sweep::Plan::parse(&body, "README.md")
                .unwrap_or_else(|e| panic!("README.md line {line}: {e}\n{body}"));
            assert!(plan.runs() > 0);
            continue;
        }
        let text =
            complete(&body).unwrap_or_else(|| panic!("README.md line {line}: a snippet of unknown shape:\n{body}"));
        let s = Scenario::parse(&text, "README.md").unwrap_or_else(|e| panic!("README.md line {line}: {e}\n{text}"));
        s.build_variants("README.md", Some(&dir)).unwrap_or_else(|e| panic!("README.md line {line}: {e}\n{text}"));
    }
}

/// The completion itself: a `[transport]` body lands under `[transport]`, so a wrong field
/// in such a snippet is caught.
#[test]
fn a_wrong_field_in_a_transport_snippet_is_caught() {
    let text = complete("scheduler = \"cats\"\nnot_a_field = 1\n").unwrap();
    let e = Scenario::parse(&text, "README.md").map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("not_a_field"), "{e}");
    assert!(complete("[[variants]]\nname = \"x\"\n").is_none());
}
