//! Target `expr`: the `${...}` expressions of scenario values.
//!
//! The evaluator is private to `workloads`, so expressions reach it the way
//! a user's do, inside a scenario. Generated as trees in the grammar's
//! shape (sums of products of unaries: numbers, params, parentheses, the
//! five functions), they are written out with random spacing, and the tree
//! is also evaluated here by the format's rules. Where the expression is a
//! pool's `hourly_price` (a plain number field), that reference value is a
//! second oracle: the scenario must load exactly when the value is a finite
//! number ≥ 0, and its resolved price must be that number. Elsewhere in the
//! scenario (counts, durations, quantities, texts) only the crash oracles
//! apply, since units and rounding differ per field.

use crate::bytes::havoc;
use crate::generate::{pick, small_or_large};
use crate::oracle::{Checked, check_error, one_line};
use crate::yaml::{Node, Style, write};
use crate::{Target, scenario};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Deepest nesting the evaluator accepts (`workloads`' `MAX_DEPTH`).
const MAX_DEPTH: usize = 64;

/// An expression tree. `Chain`s of `+ -` hold products or unaries, chains of
/// `* /` hold unaries, so that the written text parses back into this tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Ex {
    /// a literal as written, and what the tokenizer makes of it
    Lit(String, Lit),
    Param(String),
    Neg(Box<Ex>),
    Pos(Box<Ex>),
    Paren(Box<Ex>),
    Chain(Box<Ex>, Vec<(char, Ex)>),
    Call(String, Vec<Ex>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lit {
    Num(f64),
    /// a number with a unit: not allowed in a plain number field
    Quantity,
    /// a token the tokenizer refuses (`1.2.3`, `%`)
    Bad,
}

/// A param of the expression scenario and its value.
#[derive(Debug, Clone, PartialEq)]
pub enum PVal {
    Num(f64),
    Text(&'static str),
}

/// The params the scenario declares.
pub const PARAMS: &[(&str, PVal)] = &[
    ("nodes", PVal::Num(4.0)),
    ("half", PVal::Num(0.5)),
    ("zero", PVal::Num(0.0)),
    ("big", PVal::Num(1e300)),
    ("tiny", PVal::Num(5e-324)),
    ("neg", PVal::Num(-3.0)),
    ("whole", PVal::Num(12.0)),
    ("dur", PVal::Text("5m")),
    ("mem", PVal::Text("512Mi")),
    ("cpu", PVal::Text("250m")),
];

const FUNCS: &[&str] = &["min", "max", "floor", "ceil", "round"];

/// Writes literals the tokenizer reads, with what they mean.
fn literal(rng: &mut impl Rng) -> Ex {
    let fixed: &[(&str, Lit)] = &[
        ("0", Lit::Num(0.0)),
        ("1", Lit::Num(1.0)),
        ("2", Lit::Num(2.0)),
        ("3", Lit::Num(3.0)),
        ("10", Lit::Num(10.0)),
        ("0.5", Lit::Num(0.5)),
        (".5", Lit::Num(0.5)),
        ("5.", Lit::Num(5.0)),
        ("1.5e2", Lit::Num(150.0)),
        ("1e+2", Lit::Num(100.0)),
        ("1E-2", Lit::Num(0.01)),
        ("1e308", Lit::Num(1e308)),
        ("1e309", Lit::Num(f64::INFINITY)),
        ("1.7976931348623157e308", Lit::Num(f64::MAX)),
        ("5e-324", Lit::Num(5e-324)),
        ("4294967296", Lit::Num(4_294_967_296.0)),
        ("007", Lit::Num(7.0)),
        ("5m", Lit::Quantity),
        ("512Mi", Lit::Quantity),
        ("1e", Lit::Quantity),
        ("2x", Lit::Quantity),
        ("1.2.3", Lit::Bad),
        ("1..", Lit::Bad),
    ];
    match rng.random_range(0..4) {
        // any f64 the generator can write exactly (Display round-trips)
        0 => {
            let v: f64 = match rng.random_range(0..3) {
                0 => f64::from(rng.random_range(0u32..1000)),
                1 => rng.random_range(0.0..100.0),
                _ => f64::from_bits(rng.random::<u64>() & !(1 << 63)),
            };
            if v.is_finite() {
                Ex::Lit(format!("{v}"), Lit::Num(v))
            } else {
                Ex::Lit("1".into(), Lit::Num(1.0))
            }
        }
        _ => {
            let (t, l) = pick(rng, fixed);
            Ex::Lit(t.to_string(), *l)
        }
    }
}

fn param(rng: &mut impl Rng) -> Ex {
    if rng.random_bool(0.9) {
        Ex::Param(pick(rng, PARAMS).0.to_string())
    } else {
        Ex::Param(pick(rng, &["nodez", "min", "_", "x1", "Nodes"]).to_string())
    }
}

/// A random sum (the grammar's top level) of at most about `budget` nodes.
pub fn sum(rng: &mut impl Rng, budget: usize) -> Ex {
    let terms = if budget > 2 { rng.random_range(1..=3) } else { 1 };
    let first = product(rng, budget / terms);
    let rest = (1..terms)
        .map(|_| (*pick(rng, &['+', '-']), product(rng, budget / terms)))
        .collect::<Vec<_>>();
    if rest.is_empty() {
        first
    } else {
        Ex::Chain(Box::new(first), rest)
    }
}

fn product(rng: &mut impl Rng, budget: usize) -> Ex {
    let factors = if budget > 2 { rng.random_range(1..=3) } else { 1 };
    let first = unary(rng, budget / factors);
    let rest = (1..factors)
        .map(|_| (*pick(rng, &['*', '/']), unary(rng, budget / factors)))
        .collect::<Vec<_>>();
    if rest.is_empty() {
        first
    } else {
        Ex::Chain(Box::new(first), rest)
    }
}

fn unary(rng: &mut impl Rng, budget: usize) -> Ex {
    match rng.random_range(0..10) {
        0 => Ex::Neg(Box::new(unary(rng, budget.saturating_sub(1)))),
        1 if rng.random_bool(0.3) => Ex::Pos(Box::new(unary(rng, budget.saturating_sub(1)))),
        _ => primary(rng, budget),
    }
}

fn primary(rng: &mut impl Rng, budget: usize) -> Ex {
    match rng.random_range(0..10) {
        0..=3 => literal(rng),
        4..=6 => param(rng),
        7 if budget > 1 => Ex::Paren(Box::new(sum(rng, budget - 1))),
        8 | 9 if budget > 1 => {
            let name = if rng.random_bool(0.95) {
                pick(rng, FUNCS).to_string()
            } else {
                pick(rng, &["sqrt", "Min", "abs"]).to_string()
            };
            let n = match rng.random_range(0..10) {
                0 => 0,
                1..=6 => 1,
                _ => rng.random_range(2..5),
            };
            Ex::Call(name, (0..n).map(|_| sum(rng, (budget - 1) / n.max(1))).collect())
        }
        _ => literal(rng),
    }
}

/// An expression of one of the shapes that stress the evaluator: nesting
/// about the 64-level cap, far past it, flat chains of thousands of terms.
pub fn expression(rng: &mut impl Rng) -> Ex {
    match rng.random_range(0..100) {
        // nested parentheses, unary minus or calls right at and past the cap
        0..=6 => {
            let depth = *pick(rng, &[62, 63, 64, 65, 66, 100, 200]);
            let how = rng.random_range(0..3);
            // a minus binds tighter than `*` and `+`: it may only wrap a unary, or
            // the text would parse into another tree
            let mut e = if how == 1 { unary(rng, 4) } else { sum(rng, 4) };
            for _ in 0..depth {
                e = match how {
                    0 => Ex::Paren(Box::new(e)),
                    1 => Ex::Neg(Box::new(e)),
                    _ => Ex::Call("max".into(), vec![e]),
                };
            }
            e
        }
        // a long flat chain, which must parse and evaluate without recursing per term
        7..=8 => {
            let terms = small_or_large(rng, 5000, 100_000);
            let op = *pick(rng, &['+', '-', '*', '/']);
            let unit = match op {
                '*' | '/' => Ex::Lit("1".into(), Lit::Num(1.0)),
                _ => pick(
                    rng,
                    &[
                        Ex::Lit("1".into(), Lit::Num(1.0)),
                        Ex::Param("half".into()),
                        Ex::Param("nodes".into()),
                    ],
                )
                .clone(),
            };
            let first = if op == '-' {
                Ex::Lit(format!("{terms}"), Lit::Num(terms as f64))
            } else {
                unit.clone()
            };
            Ex::Chain(Box::new(first), (1..terms).map(|_| (op, unit.clone())).collect())
        }
        _ => {
            let budget = small_or_large(rng, 12, 200);
            sum(rng, budget)
        }
    }
}

/// Spacing the tokenizer skips: any Unicode white space.
const SPACES: &[&str] = &["", " ", " ", "  ", "\t", "\n", "\u{a0}", "\u{3000}"];

/// `e` as text, with random spacing between tokens.
pub fn render(e: &Ex, rng: &mut impl Rng) -> String {
    let mut out = String::new();
    render_into(e, rng, &mut out);
    out
}

fn render_into(e: &Ex, rng: &mut impl Rng, out: &mut String) {
    let sp = |rng: &mut dyn rand::RngCore| *pick(rng, SPACES);
    match e {
        Ex::Lit(t, _) => out.push_str(t),
        Ex::Param(n) => out.push_str(n),
        Ex::Neg(x) => {
            out.push('-');
            out.push_str(sp(rng));
            render_into(x, rng, out);
        }
        Ex::Pos(x) => {
            out.push('+');
            render_into(x, rng, out);
        }
        Ex::Paren(x) => {
            out.push('(');
            out.push_str(sp(rng));
            render_into(x, rng, out);
            out.push_str(sp(rng));
            out.push(')');
        }
        Ex::Chain(first, rest) => {
            render_into(first, rng, out);
            // long chains are written with one spacing, to keep generation fast
            let fixed = (rest.len() > 64).then(|| sp(rng));
            for (op, x) in rest {
                out.push_str(fixed.unwrap_or_else(|| sp(rng)));
                // `1e` then `-7` would read as the number 1e-7
                if out.ends_with(['e', 'E']) {
                    out.push(' ');
                }
                out.push(*op);
                out.push_str(fixed.unwrap_or_else(|| sp(rng)));
                render_into(x, rng, out);
            }
        }
        Ex::Call(name, args) => {
            out.push_str(name);
            out.push_str(if rng.random_bool(0.9) { "" } else { " " });
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    out.push_str(sp(rng));
                }
                render_into(a, rng, out);
            }
            out.push(')');
        }
    }
}

/// What `e` evaluates to by the format's rules, with these params: None
/// when the scenario must refuse it (a bad token, an unknown param or
/// function, a wrong argument count, a unit or a string in a plain number
/// field, division by zero, a result that is not finite, nesting past the cap).
pub fn reference(e: &Ex, params: &[(&str, PVal)]) -> Option<f64> {
    if depth(e, 1) > MAX_DEPTH {
        return None;
    }
    eval(e, params)
}

/// The deepest nesting level the parser reaches: parsing starts at level 1,
/// and each parenthesis, unary operator and function argument enters one more.
fn depth(e: &Ex, level: usize) -> usize {
    match e {
        Ex::Lit(..) | Ex::Param(_) => level,
        Ex::Neg(x) | Ex::Pos(x) | Ex::Paren(x) => depth(x, level + 1),
        Ex::Chain(first, rest) => rest
            .iter()
            .map(|(_, x)| depth(x, level))
            .fold(depth(first, level), usize::max),
        Ex::Call(_, args) => args.iter().map(|a| depth(a, level + 1)).fold(level, usize::max),
    }
}

fn eval(e: &Ex, params: &[(&str, PVal)]) -> Option<f64> {
    let v = match e {
        Ex::Lit(_, Lit::Num(n)) => *n,
        Ex::Lit(_, Lit::Quantity | Lit::Bad) => return None,
        Ex::Param(name) => match params.iter().find(|(n, _)| n == name)? {
            (_, PVal::Num(n)) => *n,
            (_, PVal::Text(_)) => return None,
        },
        Ex::Neg(x) => -eval(x, params)?,
        Ex::Pos(x) | Ex::Paren(x) => eval(x, params)?,
        Ex::Chain(first, rest) => {
            let mut acc = eval(first, params)?;
            for (op, x) in rest {
                let b = eval(x, params)?;
                acc = match op {
                    '+' => acc + b,
                    '-' => acc - b,
                    '*' => acc * b,
                    _ if b == 0.0 => return None,
                    _ => acc / b,
                };
                if !acc.is_finite() {
                    return None;
                }
            }
            acc
        }
        Ex::Call(name, args) => {
            let vals = args.iter().map(|a| eval(a, params)).collect::<Option<Vec<_>>>();
            let ok = match name.as_str() {
                "min" | "max" => !args.is_empty(),
                "floor" | "ceil" | "round" => args.len() == 1,
                _ => false,
            };
            if !ok {
                return None;
            }
            let vals = vals?;
            match name.as_str() {
                "min" => vals.iter().copied().fold(f64::INFINITY, f64::min),
                "max" => vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                "floor" => vals[0].floor(),
                "ceil" => vals[0].ceil(),
                _ => vals[0].round(),
            }
        }
    };
    v.is_finite().then_some(v)
}

/// A number as the format writes it into text (`workloads`' `format_number`).
fn format_number(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// One generated case: a scenario holding an expression.
#[derive(Debug, Clone)]
pub struct Case {
    pub yaml: String,
    pub overrides: Vec<String>,
    /// for a case whose expression is the price: the price it must load
    /// with, None when it must be refused; unset for the other cases
    pub expected_price: Option<Option<f64>>,
    pub expression: String,
}

/// The `expr` target.
#[derive(Debug, Default)]
pub struct Expr {
    /// what the last input earned beyond the time limit
    allowance: std::time::Duration,
}

impl Target for Expr {
    type Case = Case;
    const NAME: &'static str = "expr";

    fn generate(&mut self, rng: &mut ChaCha8Rng) -> Case {
        let tree = expression(rng);
        let mut text = render(&tree, rng);
        let mut params: Vec<(&str, PVal)> = PARAMS.to_vec();
        let mut overrides = Vec::new();
        // an override that is not a finite number must refuse the whole scenario
        let mut refused = false;
        if rng.random_bool(0.2) {
            let name = pick(rng, &["nodes", "half", "zero", "big", "neg"]);
            let value = pick(rng, &["0.25", "7", "0", "-0", "1e300", "-2", "100", "x", "inf", ""]);
            overrides.push(format!("{name}={value}"));
            match value.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => {
                    if let Some(p) = params.iter_mut().find(|(n2, _)| n2 == name) {
                        p.1 = PVal::Num(n);
                    }
                }
                _ => refused = true,
            }
        }
        // noise the reference cannot follow: then only the crash oracles apply
        let noisy = rng.random_bool(0.05);
        if noisy {
            let mut b = text.into_bytes();
            havoc(&mut b, 2, rng);
            text = String::from_utf8_lossy(&b).into_owned();
        }
        let (prefix, suffix) = *pick(
            rng,
            &[("", ""), ("", ""), ("", ""), (" ", ""), ("", " "), ("\u{a0}", "\t")],
        );
        let value = format!("{prefix}${{{text}}}{suffix}");
        let in_price = rng.random_bool(0.6);
        let expected_price = (in_price && !noisy).then(|| {
            if refused {
                return None;
            }
            let v = if prefix.is_empty() && suffix.is_empty() {
                reference(&tree, &params)
            } else {
                // text around the expression: it is substituted, then read as a number
                let single = match &tree {
                    Ex::Param(name) => params.iter().find(|(n, _)| n == name),
                    _ => None,
                };
                let piece = match single {
                    Some((_, PVal::Num(n))) => Some(format_number(*n)),
                    Some((_, PVal::Text(t))) => Some(t.to_string()),
                    None => reference(&tree, &params).map(format_number),
                };
                piece.and_then(|p| format!("{prefix}{p}{suffix}").trim().parse::<f64>().ok())
            };
            v.filter(|v| v.is_finite() && *v >= 0.0)
        });
        Case {
            yaml: scenario_with(&value, in_price, rng),
            overrides,
            expected_price,
            expression: value,
        }
    }

    fn exercise(&mut self, case: &Case) -> Checked {
        let origin = "expr.yaml";
        let loaded = workloads::parse_str_with(origin, &case.yaml, &case.overrides);
        let outcome = match &loaded {
            Ok(s) => scenario::check_loaded(origin, s, 1),
            Err(e) => Err(e.to_string()),
        };
        self.allowance = scenario::allowance(&outcome);
        let price = match (&loaded, outcome) {
            (Ok(s), Ok(_)) => s.resolved()["cluster"]["pools"][0]["hourly_price"].as_f64(),
            (Ok(_), Err(problem)) => return Checked::Violation(problem),
            (Err(_), Err(msg)) => {
                if let Some(problem) = check_error(&msg, &[origin], &[]) {
                    return Checked::Violation(problem);
                }
                None
            }
            (Err(_), Ok(_)) => return Checked::Violation("unreachable: an error that checked".into()),
        };
        if let Some(expected) = case.expected_price {
            match (expected, price) {
                (Some(want), Some(got)) if want == got => {}
                (None, None) => {}
                (want, got) => {
                    let why = loaded.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
                    return Checked::Violation(format!(
                        "hourly_price {}: expected {want:?}, loaded {got:?} {}",
                        one_line(&case.expression),
                        one_line(&why)
                    ));
                }
            }
        }
        if loaded.is_ok() {
            Checked::Accepted
        } else {
            Checked::Rejected
        }
    }

    fn allowance(&self) -> std::time::Duration {
        self.allowance
    }

    fn dump(case: &Case) -> Vec<u8> {
        let mut out = String::new();
        for o in &case.overrides {
            out.push_str(&format!("# --set {}\n", one_line(o)));
        }
        out.push_str(&case.yaml);
        out.into_bytes()
    }
}

/// A small valid scenario with `value` as its first pool's price, or else
/// in one other field chosen at random. The other fields are constants, so
/// that an override of a param changes nothing but the expression.
fn scenario_with(value: &str, in_price: bool, rng: &mut impl Rng) -> String {
    let mut fields: Vec<(&str, Node)> = vec![
        ("duration", Node::str("1h")),
        ("sample_interval", Node::str("1m")),
        ("pool_count", Node::plain(4)),
        ("cpu", Node::str("4")),
        ("memory", Node::str("16Gi")),
        ("max_pods", Node::plain(110)),
        ("label", Node::str("general")),
        ("request_cpu", Node::str("250m")),
        ("request_memory", Node::str("256Mi")),
        ("priority", Node::plain(10)),
        ("crash_rate", Node::plain(0.5)),
        ("create_count", Node::plain(8)),
        ("rate", Node::plain(2)),
        ("at", Node::str("1m")),
        ("fraction", Node::plain(0.5)),
        ("every", Node::str("1m")),
        ("description", Node::str("a scenario")),
    ];
    let price = if in_price {
        Node::str(value)
    } else {
        let i = rng.random_range(0..fields.len());
        fields[i].1 = Node::str(value);
        Node::plain(0.1)
    };
    let f = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or(Node::plain(0))
    };
    let params = Node::Map(
        PARAMS
            .iter()
            .map(|(n, v)| {
                let node = match v {
                    // Debug writes 1e300 and 4.0, which YAML reads as floats
                    PVal::Num(x) => Node::plain(format!("{x:?}")),
                    PVal::Text(t) => Node::str(*t),
                };
                (n.to_string(), node)
            })
            .collect(),
    );
    let tree = Node::map(vec![
        ("name", Node::str("expr")),
        ("description", f("description")),
        ("params", params),
        ("duration", f("duration")),
        ("sample_interval", f("sample_interval")),
        (
            "cluster",
            Node::map(vec![(
                "pools",
                Node::Seq(vec![Node::map(vec![
                    ("name", Node::str("general")),
                    ("count", f("pool_count")),
                    ("machine_type", Node::str("e2-standard-4")),
                    ("hourly_price", price),
                    ("capacity", Node::map(vec![("cpu", f("cpu")), ("memory", f("memory"))])),
                    ("max_pods", f("max_pods")),
                    ("labels", Node::map(vec![("tier", f("label"))])),
                ])]),
            )]),
        ),
        (
            "templates",
            Node::map(vec![(
                "web",
                Node::map(vec![
                    (
                        "requests",
                        Node::map(vec![("cpu", f("request_cpu")), ("memory", f("request_memory"))]),
                    ),
                    ("priority", f("priority")),
                    ("crash_rate_per_hour", f("crash_rate")),
                ]),
            )]),
        ),
        (
            "phases",
            Node::Seq(vec![
                Node::map(vec![(
                    "create",
                    Node::map(vec![
                        ("template", Node::str("web")),
                        ("count", f("create_count")),
                        ("rate", f("rate")),
                    ]),
                )]),
                Node::map(vec![
                    ("at", f("at")),
                    (
                        "churn",
                        Node::map(vec![
                            ("template", Node::str("web")),
                            ("fraction", f("fraction")),
                            ("every", f("every")),
                            ("for", Node::str("10m")),
                        ]),
                    ),
                ]),
            ]),
        ),
    ]);
    // the layout varies, the document does not: a second one would change what loads
    write(&tree, &Style::random_layout(rng), rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::input_rng;

    fn lit(v: f64) -> Ex {
        Ex::Lit(format!("{v}"), Lit::Num(v))
    }

    #[test]
    fn the_reference_follows_the_format() {
        let p = PARAMS;
        let chain = |first, rest: Vec<(char, Ex)>| Ex::Chain(Box::new(first), rest);
        assert_eq!(
            reference(&chain(lit(10.0), vec![('-', lit(2.0)), ('-', lit(3.0))]), p),
            Some(5.0)
        );
        assert_eq!(
            reference(&chain(lit(1.0), vec![('/', Ex::Param("zero".into()))]), p),
            None
        );
        assert_eq!(reference(&Ex::Param("dur".into()), p), None);
        assert_eq!(reference(&Ex::Call("min".into(), vec![]), p), None);
        assert_eq!(reference(&Ex::Call("round".into(), vec![lit(2.5)]), p), Some(3.0));
        assert_eq!(
            reference(&chain(Ex::Param("big".into()), vec![('*', lit(1e10))]), p),
            None
        );
        let mut deep = lit(1.0);
        for _ in 0..63 {
            deep = Ex::Paren(Box::new(deep));
        }
        // level 1, then 63 parentheses: level 64 is allowed, 65 is not
        assert_eq!(reference(&deep, p), Some(1.0));
        assert_eq!(reference(&Ex::Neg(Box::new(deep)), p), None);
    }

    #[test]
    fn rendering_parses_back_to_the_same_value() {
        // the printed text, evaluated by the scenario, is what the tree says
        let mut agreed = 0;
        for i in 0..300 {
            let mut rng = input_rng("expr-test", 1, i);
            let e = sum(&mut rng, 12);
            let text = render(&e, &mut rng);
            let want = reference(&e, PARAMS).filter(|v| *v >= 0.0);
            let yaml = scenario_with(&format!("${{{text}}}"), true, &mut rng);
            let got = workloads::parse_str("t.yaml", &yaml)
                .ok()
                .and_then(|s| s.resolved()["cluster"]["pools"][0]["hourly_price"].as_f64());
            assert_eq!(want, got, "{text}\n{yaml}");
            agreed += usize::from(got.is_some());
        }
        assert!(agreed > 20, "only {agreed} loaded");
    }

    #[test]
    fn generation_is_deterministic_per_seed() {
        let gen_case = |i| Expr::default().generate(&mut input_rng("expr", 4, i)).yaml;
        assert_eq!(gen_case(3), gen_case(3));
        assert_ne!(gen_case(3), gen_case(4));
    }
}
