//! Changes to a scenario from the command line: `--set PATH=VALUE` (any field by its path,
//! `topology.bottleneck.rate=5Mbps`, `flows[0].transport.cc=cubic`), and scenarios written
//! as JSON. Both produce TOML text that [`crate::scenario::Scenario::parse`] then reads, so an
//! override gets exactly the checks and messages a value in the file gets.
//!
//! A VALUE is read as a TOML value when it is one (`3`, `0.05`, `true`, `"text"`,
//! `[1, 2]`, `{ kind = "bernoulli", loss_prob = 0.02 }`), and as a string otherwise
//! (`5Mbps`, `cubic`, `builtin:cats`), so units need no quoting. Tables on the way are
//! created when missing (`transport.cc` in a file without `[transport]`); array elements
//! (`flows[1]`) must exist.

use toml_edit::{DocumentMut, Item, Table, Value};

/// One `--set` argument, split: the path's steps and the value.
#[derive(Clone, Debug)]
pub struct Override {
    /// As the user wrote it, for messages.
    pub text: String,
    /// Steps of the path: keys and array indices.
    pub steps: Vec<Step>,
    /// The value to set.
    pub value: Value,
}

/// A step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A key of a table.
    Key(String),
    /// An element of an array (of tables, or an inline array).
    Index(usize),
}

/// Parses `PATH=VALUE`.
pub fn parse_override(text: &str) -> Result<Override, String> {
    let Some((path, raw)) = text.split_once('=') else {
        return Err(format!("--set {text}: expected PATH=VALUE, e.g. topology.bottleneck.rate=5Mbps"));
    };
    let path = path.trim();
    let steps = parse_path(path).map_err(|m| format!("--set {text}: {m}"))?;
    let raw = raw.trim();
    let value = match raw.parse::<Value>() {
        Ok(v) => v,
        Err(_) => Value::from(raw),
    };
    Ok(Override { text: text.to_string(), steps, value })
}

/// `a.b[2].c` → [Key a, Key b, Index 2, Key c].
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    if path.is_empty() {
        return Err("the field path is empty".into());
    }
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        let valid = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid(key) {
            return Err(format!("\"{part}\" is not a field name (letters, digits, `_` and `-`, then optional [N])"));
        }
        steps.push(Step::Key(key.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(|| format!("\"{part}\": a `[` without `]`"))?;
            let n: usize = rest[1..close]
                .parse()
                .map_err(|_| format!("\"{part}\": expected an index such as [0], got [{}]", &rest[1..close]))?;
            steps.push(Step::Index(n));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("\"{part}\": unexpected \"{rest}\" after an index"));
            }
        }
    }
    Ok(steps)
}

/// The path of `steps[..n]` as written in messages (`flows[0].transport`).
fn shown(steps: &[Step]) -> String {
    let mut s = String::new();
    for st in steps {
        match st {
            Step::Key(k) if s.is_empty() => s.push_str(k),
            Step::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Applies overrides to a scenario's TOML text, in order.
pub fn apply(text: &str, overrides: &[Override]) -> Result<String, String> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    for o in overrides {
        set(doc.as_table_mut(), &o.steps, o.value.clone()).map_err(|m| format!("--set {}: {m}", o.text))?;
    }
    Ok(doc.to_string())
}

/// A place a step can lead to.
enum Slot<'a> {
    Item(&'a mut Item),
    Value(&'a mut Value),
}

fn set(root: &mut Table, steps: &[Step], value: Value) -> Result<(), String> {
    set_at(root, steps, value, true)
}

/// `top`: `root` is the document (a missing table there becomes a `[header]` table; anywhere
/// else an inline one, which stays where it is written).
fn set_at(root: &mut Table, steps: &[Step], value: Value, top: bool) -> Result<(), String> {
    let Some(Step::Key(first)) = steps.first() else { return Err("a path starts with a field name".into()) };
    let mut slot = Slot::Item(root.entry(first).or_insert(Item::None));
    for (i, step) in steps.iter().enumerate().skip(1) {
        let here = shown(&steps[..i]);
        let last = i + 1 == steps.len();
        slot = match (slot, step) {
            (Slot::Item(item), Step::Key(k)) => {
                if item.is_none() {
                    // A missing table on the way: created (as a header table at the top level,
                    // inline deeper down, as a reader would write it).
                    *item = if top && i == 1 {
                        Item::Table(Table::new())
                    } else {
                        Item::Value(Value::InlineTable(Default::default()))
                    };
                }
                match item {
                    Item::Table(t) => Slot::Item(t.entry(k).or_insert(Item::None)),
                    Item::Value(Value::InlineTable(t)) => {
                        if !t.contains_key(k) {
                            if last {
                                t.insert(k, value.clone());
                            } else {
                                t.insert(k, Value::InlineTable(Default::default()));
                            }
                        }
                        Slot::Value(t.get_mut(k).expect("inserted"))
                    }
                    _ => return Err(format!("{here} is not a table, so it has no field `{k}`")),
                }
            }
            (Slot::Value(v), Step::Key(k)) => match v {
                Value::InlineTable(t) => {
                    if !t.contains_key(k) {
                        t.insert(k, if last { value.clone() } else { Value::InlineTable(Default::default()) });
                    }
                    Slot::Value(t.get_mut(k).expect("inserted"))
                }
                _ => return Err(format!("{here} is not a table, so it has no field `{k}`")),
            },
            (Slot::Item(item), Step::Index(n)) => match item {
                Item::ArrayOfTables(a) => {
                    let len = a.len();
                    let t = a.get_mut(*n).ok_or_else(|| no_element(&here, len, *n))?;
                    return set_in_table(t, &steps[i + 1..], value, &shown(&steps[..=i]));
                }
                Item::Value(Value::Array(a)) => Slot::Value(element(a, *n, &here)?),
                Item::None => return Err(format!("the scenario has no {here}")),
                _ => return Err(format!("{here} is not a list")),
            },
            (Slot::Value(v), Step::Index(n)) => match v {
                Value::Array(a) => Slot::Value(element(a, *n, &here)?),
                _ => return Err(format!("{here} is not a list")),
            },
        };
    }
    match slot {
        Slot::Item(item) => *item = Item::Value(value),
        Slot::Value(v) => *v = value,
    }
    Ok(())
}

/// Element `n` of the list at `here`.
fn element<'a>(a: &'a mut toml_edit::Array, n: usize, here: &str) -> Result<&'a mut Value, String> {
    let len = a.len();
    a.get_mut(n).ok_or_else(|| no_element(here, len, n))
}

fn no_element(here: &str, len: usize, n: usize) -> String {
    format!("{here} has {len} {}, so there is no [{n}]", if len == 1 { "entry" } else { "entries" })
}

/// [`set`] below an element of an array of tables (`flows[1]`); messages name the full path.
fn set_in_table(t: &mut Table, steps: &[Step], value: Value, at: &str) -> Result<(), String> {
    match steps.first() {
        None => Err(format!("{at} is a table: name one of its fields")),
        Some(Step::Index(_)) => Err(format!("{at} is a table, not a list")),
        Some(Step::Key(_)) => {
            set_at(t, steps, value, false).map_err(|m| match m.strip_prefix("the scenario has no ") {
                Some(rest) => format!("the scenario has no {at}.{rest}"),
                None => format!("{at}.{m}"),
            })
        }
    }
}

/// A scenario written as JSON (the same fields as the TOML file), as TOML text.
pub fn json_to_toml(json: &str) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    if !v.is_object() {
        return Err("expected a JSON object with the scenario's fields".into());
    }
    if let Some(path) = find_null(&v, "") {
        return Err(format!("{path}: null has no TOML form; leave the field out for its default"));
    }
    toml::to_string(&v).map_err(|e| format!("cannot be written as a scenario: {e}"))
}

fn find_null(v: &serde_json::Value, at: &str) -> Option<String> {
    match v {
        serde_json::Value::Null => Some(if at.is_empty() { "(the document)".into() } else { at.to_string() }),
        serde_json::Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| find_null(x, &format!("{at}[{i}]"))),
        serde_json::Value::Object(o) => o.iter().find_map(|(k, x)| {
            let p = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            find_null(x, &p)
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(text: &str, sets: &[&str]) -> Result<String, String> {
        let o: Vec<Override> = sets.iter().map(|s| parse_override(s)).collect::<Result<_, _>>()?;
        apply(text, &o)
    }

    const BASE: &str = "name = \"t\"\n[topology]\nkind = \"dumbbell\"\nbottleneck = { rate = \"2Mbps\", delay = \"25ms\" }\n\
                        [[flows]]\nname = \"a\"\nclient = \"c0\"\nserver = \"s0\"\n[[flows]]\nname = \"b\"\nclient = \"c0\"\nserver = \"s0\"\n";

    #[test]
    fn values_are_toml_when_they_parse_and_strings_otherwise() {
        let o = parse_override("seed=3").unwrap();
        assert_eq!(o.value.as_integer(), Some(3));
        let o = parse_override("topology.bottleneck.rate = 5Mbps").unwrap();
        assert_eq!(o.value.as_str(), Some("5Mbps"));
        assert_eq!(
            o.steps,
            vec![Step::Key("topology".into()), Step::Key("bottleneck".into()), Step::Key("rate".into())]
        );
        let o = parse_override("flows[1].start=\"2s\"").unwrap();
        assert_eq!(o.steps[1], Step::Index(1));
        assert_eq!(o.value.as_str(), Some("2s"));
        assert!(parse_override("loss").unwrap_err().contains("expected PATH=VALUE"));
        assert!(parse_override("flows[x].name=a").unwrap_err().contains("expected an index"));
        assert!(parse_override("a..b=1").unwrap_err().contains("not a field name"));
    }

    #[test]
    fn sets_fields_in_header_tables_inline_tables_and_arrays_of_tables() {
        let out = over(BASE, &["topology.bottleneck.rate=5Mbps", "flows[1].start=1s", "seed=7", "transport.cc=cubic"])
            .unwrap();
        let v: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(v["topology"]["bottleneck"]["rate"].as_str(), Some("5Mbps"));
        assert_eq!(v["topology"]["bottleneck"]["delay"].as_str(), Some("25ms"));
        assert_eq!(v["flows"][1]["start"].as_str(), Some("1s"));
        assert!(v["flows"][0].get("start").is_none());
        assert_eq!(v["seed"].as_integer(), Some(7));
        assert_eq!(v["transport"]["cc"].as_str(), Some("cubic"));
        // A table on the way that the file lacks is created; so is a nested inline one.
        let out = over(BASE, &["topology.bottleneck.loss.kind=bernoulli", "topology.bottleneck.loss.loss_prob=0.02"])
            .unwrap();
        let v: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(v["topology"]["bottleneck"]["loss"]["loss_prob"].as_float(), Some(0.02));
        // A whole inline table as the value.
        let out = over(BASE, &["topology.access={ rate = \"1Gbps\", delay = \"0ms\" }"]).unwrap();
        let v: toml::Value = toml::from_str(&out).unwrap();
        assert_eq!(v["topology"]["access"]["rate"].as_str(), Some("1Gbps"));
    }

    #[test]
    fn paths_that_lead_nowhere_are_errors_naming_the_override() {
        let e = over(BASE, &["flows[2].name=c"]).unwrap_err();
        assert_eq!(e, "--set flows[2].name=c: flows has 2 entries, so there is no [2]");
        let e = over(BASE, &["name.x=1"]).unwrap_err();
        assert_eq!(e, "--set name.x=1: name is not a table, so it has no field `x`");
        let e = over(BASE, &["variants[0].name=x"]).unwrap_err();
        assert_eq!(e, "--set variants[0].name=x: the scenario has no variants");
        let e = over(BASE, &["flows[0]=1"]).unwrap_err();
        assert_eq!(e, "--set flows[0]=1: flows[0] is a table: name one of its fields");
        let e = over(BASE, &["flows[1].name.x=1"]).unwrap_err();
        assert_eq!(e, "--set flows[1].name.x=1: flows[1].name is not a table, so it has no field `x`");
        let e = over(BASE, &["topology.bottleneck.rate.x=1"]).unwrap_err();
        assert_eq!(
            e,
            "--set topology.bottleneck.rate.x=1: topology.bottleneck.rate is not a table, so it has no field `x`"
        );
    }

    #[test]
    fn json_scenarios_become_toml() {
        let t = json_to_toml(r#"{"name":"j","seed":2,"topology":{"kind":"dumbbell"},"flows":[{"name":"f","client":"c0","server":"s0"}]}"#)
            .unwrap();
        let v: toml::Value = toml::from_str(&t).unwrap();
        assert_eq!(v["flows"][0]["name"].as_str(), Some("f"));
        assert!(json_to_toml("[1]").unwrap_err().contains("JSON object"));
        assert_eq!(
            json_to_toml(r#"{"name":null}"#).unwrap_err(),
            "name: null has no TOML form; leave the field out for its default"
        );
        assert!(json_to_toml("{").unwrap_err().starts_with("not JSON"));
    }
}
