//! Arithmetic over params inside `${...}`: numbers, param names, `+ - * /`,
//! parentheses, unary minus, and `min`, `max`, `floor`, `ceil`, `round`.
//! A number with a unit (`5m`, `512Mi`, `250m`) is a quantity literal whose
//! meaning depends on the field it is written in.
//!
//! A small parser of our own rather than a general expression crate: the
//! crates that fit (evalexpr and the like) do integer division on whole
//! numbers (`${nodes / 3}` would silently floor) and accept a much larger
//! language (strings, booleans, assignment), which a scenario does not need.

use std::fmt;

/// Deepest nesting of parentheses and unary operators accepted, so that a
/// hostile `((((...` cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Num(f64),
    /// a number with a unit, as written (`5m`, `512Mi`)
    Quantity(String),
    Param(String),
    Neg(Box<Expr>),
    /// `first op rest op rest ...` at one precedence level, applied left to
    /// right. A chain is a flat list rather than a tree one level per
    /// operator, so that `1 + 1 + ... + 1` with a hundred thousand terms
    /// parses, evaluates and drops without recursing once per term: the
    /// depth of an expression tree is bounded by its nesting, which
    /// `MAX_DEPTH` caps.
    Chain(Box<Expr>, Vec<(Op, Expr)>),
    Call(Func, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    Min,
    Max,
    Floor,
    Ceil,
    Round,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "min" => Func::Min,
            "max" => Func::Max,
            "floor" => Func::Floor,
            "ceil" => Func::Ceil,
            "round" => Func::Round,
            _ => return None,
        })
    }
}

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Round => "round",
        })
    }
}

/// What names and quantity literals mean where an expression is evaluated.
pub(crate) trait Env {
    fn param(&self, name: &str) -> Result<f64, String>;
    fn quantity(&self, text: &str) -> Result<f64, String>;
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Quantity(String),
    Ident(String),
    Sym(char),
}

fn tokenize(src: &str) -> Result<Vec<(usize, Token)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            // an exponent only when digits follow, so that `5e` is not mistaken for one
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let num_end = i;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            if i > num_end {
                out.push((start, Token::Quantity(text)));
            } else {
                let n: f64 = text.parse().map_err(|_| format!("`{text}` is not a number"))?;
                out.push((start, Token::Num(n)));
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((start, Token::Ident(chars[start..i].iter().collect())));
        } else if "+-*/(),".contains(c) {
            out.push((i, Token::Sym(c)));
            i += 1;
        } else {
            return Err(format!("unexpected character `{c}` at position {}", i + 1));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|(_, t)| t)
    }
    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).map(|(_, t)| t.clone());
        self.pos += 1;
        t
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn describe_here(&self) -> String {
        match self.tokens.get(self.pos) {
            None => "the end of the expression".to_string(),
            Some((at, t)) => {
                let what = match t {
                    Token::Num(n) => n.to_string(),
                    Token::Quantity(q) | Token::Ident(q) => q.clone(),
                    Token::Sym(c) => c.to_string(),
                };
                format!("`{what}` at position {}", at + 1)
            }
        }
    }
    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(format!("the expression nests deeper than {MAX_DEPTH} levels"))
        } else {
            Ok(())
        }
    }

    /// The operator at the current token when it is one of `ops`, consumed.
    fn eat_op(&mut self, ops: [(char, Op); 2]) -> Option<Op> {
        ops.into_iter().find_map(|(c, op)| self.eat(c).then_some(op))
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let e = self.chain([('+', Op::Add), ('-', Op::Sub)], Self::term)?;
        self.depth -= 1;
        Ok(e)
    }

    fn term(&mut self) -> Result<Expr, String> {
        self.chain([('*', Op::Mul), ('/', Op::Div)], Self::unary)
    }

    /// `operand (op operand)*` collected in a loop into one flat
    /// [`Expr::Chain`], however many terms there are.
    fn chain(&mut self, ops: [(char, Op); 2], operand: fn(&mut Self) -> Result<Expr, String>) -> Result<Expr, String> {
        let first = operand(self)?;
        let mut rest = Vec::new();
        while let Some(op) = self.eat_op(ops) {
            rest.push((op, operand(self)?));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Expr::Chain(Box::new(first), rest)
        })
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat('-') {
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(e)));
        }
        if self.eat('+') {
            self.enter()?;
            let e = self.unary();
            self.depth -= 1;
            return e;
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let here = self.describe_here();
        match self.next() {
            Some(Token::Num(n)) => Ok(Expr::Num(n)),
            Some(Token::Quantity(q)) => Ok(Expr::Quantity(q)),
            Some(Token::Ident(name)) => {
                if self.eat('(') {
                    let func = Func::from_name(&name)
                        .ok_or_else(|| format!("unknown function `{name}` (use min, max, floor, ceil or round)"))?;
                    let mut args = Vec::new();
                    if !self.eat(')') {
                        loop {
                            args.push(self.expr()?);
                            if self.eat(')') {
                                break;
                            }
                            if !self.eat(',') {
                                return Err(format!("expected `,` or `)`, found {}", self.describe_here()));
                            }
                        }
                    }
                    let ok = match func {
                        Func::Min | Func::Max => !args.is_empty(),
                        Func::Floor | Func::Ceil | Func::Round => args.len() == 1,
                    };
                    if !ok {
                        return Err(match func {
                            Func::Min | Func::Max => format!("{func}() needs at least one argument"),
                            _ => format!("{func}() takes exactly one argument, got {}", args.len()),
                        });
                    }
                    Ok(Expr::Call(func, args))
                } else {
                    Ok(Expr::Param(name))
                }
            }
            Some(Token::Sym('(')) => {
                let e = self.expr()?;
                if !self.eat(')') {
                    return Err(format!("expected `)`, found {}", self.describe_here()));
                }
                Ok(e)
            }
            _ => Err(format!("expected a number, a param or `(`, found {here}")),
        }
    }
}

/// Parses an expression (the text between `${` and `}`).
pub(crate) fn parse(src: &str) -> Result<Expr, String> {
    let tokens = tokenize(src)?;
    if tokens.is_empty() {
        return Err("empty expression".to_string());
    }
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    if p.pos < p.tokens.len() {
        return Err(format!("unexpected {}", p.describe_here()));
    }
    Ok(e)
}

/// Evaluates an expression; the result is always finite.
pub(crate) fn eval(e: &Expr, env: &dyn Env) -> Result<f64, String> {
    let v = match e {
        Expr::Num(n) => *n,
        Expr::Quantity(q) => env.quantity(q)?,
        Expr::Param(name) => env.param(name)?,
        Expr::Neg(inner) => -eval(inner, env)?,
        Expr::Chain(first, rest) => {
            let mut acc = eval(first, env)?;
            for (op, operand) in rest {
                let b = eval(operand, env)?;
                acc = match op {
                    Op::Add => acc + b,
                    Op::Sub => acc - b,
                    Op::Mul => acc * b,
                    Op::Div => {
                        if b == 0.0 {
                            return Err("division by zero".to_string());
                        }
                        acc / b
                    }
                };
                // every intermediate result finite, as with one node per operator
                if !acc.is_finite() {
                    return Err("the result is too large".to_string());
                }
            }
            acc
        }
        Expr::Call(func, args) => {
            let vals = args.iter().map(|a| eval(a, env)).collect::<Result<Vec<_>, _>>()?;
            match func {
                Func::Min => vals.iter().copied().fold(f64::INFINITY, f64::min),
                Func::Max => vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Func::Floor => vals.first().copied().unwrap_or(0.0).floor(),
                Func::Ceil => vals.first().copied().unwrap_or(0.0).ceil(),
                Func::Round => vals.first().copied().unwrap_or(0.0).round(),
            }
        }
    };
    if v.is_finite() {
        Ok(v)
    } else {
        Err("the result is too large".to_string())
    }
}

/// The param name when the expression is nothing but one (`${cpu}`).
pub(crate) fn as_single_param(src: &str) -> Option<&str> {
    let t = src.trim();
    let mut chars = t.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(t)
}

/// A piece of a string value that may hold `${...}` expressions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Expr(&'a str),
}

/// Splits a string into text and `${...}` pieces; None when it holds no `${`.
pub(crate) fn split_template(s: &str) -> Result<Option<Vec<Piece<'_>>>, String> {
    if !s.contains("${") {
        return Ok(None);
    }
    let mut pieces = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find("${") {
        if open > 0 {
            pieces.push(Piece::Text(&rest[..open]));
        }
        let after = &rest[open + 2..];
        let close = after
            .find('}')
            .ok_or_else(|| "`${` without a closing `}`".to_string())?;
        pieces.push(Piece::Expr(&after[..close]));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(Some(pieces))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Vars;
    impl Env for Vars {
        fn param(&self, name: &str) -> Result<f64, String> {
            match name {
                "nodes" => Ok(50.0),
                "half" => Ok(0.5),
                _ => Err(format!("unknown param `{name}`")),
            }
        }
        fn quantity(&self, text: &str) -> Result<f64, String> {
            match text {
                "5m" => Ok(300.0),
                _ => Err(format!("bad quantity {text}")),
            }
        }
    }

    fn ev(s: &str) -> Result<f64, String> {
        eval(&parse(s)?, &Vars)
    }

    #[test]
    fn arithmetic_follows_precedence() {
        assert_eq!(ev("nodes * 4").unwrap(), 200.0);
        assert_eq!(ev("1 + 2 * 3").unwrap(), 7.0);
        assert_eq!(ev("(1 + 2) * 3").unwrap(), 9.0);
        assert_eq!(ev("nodes / 3 * 3").unwrap(), 50.0);
        assert_eq!(ev("7 / 2").unwrap(), 3.5);
        assert_eq!(ev("-nodes + --3").unwrap(), -47.0);
        assert_eq!(ev("10 - 2 - 3").unwrap(), 5.0);
        assert_eq!(ev("1.5e2").unwrap(), 150.0);
        assert_eq!(ev(".5 * 4").unwrap(), 2.0);
    }

    #[test]
    fn functions_and_quantities() {
        assert_eq!(ev("round(nodes * 0.33)").unwrap(), 17.0);
        assert_eq!(ev("floor(2.7) + ceil(2.1)").unwrap(), 5.0);
        assert_eq!(ev("max(1, nodes / 100, half)").unwrap(), 1.0);
        assert_eq!(ev("min(nodes, 3)").unwrap(), 3.0);
        assert_eq!(ev("2 * 5m").unwrap(), 600.0);
    }

    #[test]
    fn errors_are_specific() {
        assert!(ev("nodez * 2").unwrap_err().contains("unknown param `nodez`"));
        assert_eq!(ev("nodes / (half - 0.5)").unwrap_err(), "division by zero");
        assert!(ev("nodes *").unwrap_err().contains("end of the expression"));
        assert!(ev("(1 + 2").unwrap_err().contains("expected `)`"));
        assert!(ev("1 2").unwrap_err().contains("unexpected `2`"));
        assert!(ev("sqrt(4)").unwrap_err().contains("unknown function"));
        assert!(ev("round(1, 2)").unwrap_err().contains("exactly one"));
        assert!(ev("min()").unwrap_err().contains("at least one"));
        assert!(ev("a % 2").unwrap_err().contains("unexpected character `%`"));
        assert!(ev("").unwrap_err().contains("empty"));
        assert!(ev("1e308 * 10").unwrap_err().contains("too large"));
        assert!(ev(&"(".repeat(500)).unwrap_err().contains("nests deeper"));
        assert!(ev(&"-".repeat(500)).unwrap_err().contains("nests deeper"));
    }

    /// The height of the tree, counted with an explicit stack so that the
    /// count itself cannot overflow on the trees the old parser built.
    fn height(e: &Expr) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(e, 1)];
        while let Some((e, d)) = stack.pop() {
            deepest = deepest.max(d);
            match e {
                Expr::Num(_) | Expr::Quantity(_) | Expr::Param(_) => {}
                Expr::Neg(inner) => stack.push((inner, d + 1)),
                Expr::Chain(first, rest) => {
                    stack.push((first, d + 1));
                    stack.extend(rest.iter().map(|(_, x)| (x, d + 1)));
                }
                Expr::Call(_, args) => stack.extend(args.iter().map(|x| (x, d + 1))),
            }
        }
        deepest
    }

    /// `terms` copies of `term` joined by `op`.
    fn chain(term: &str, op: &str, terms: usize) -> String {
        vec![term; terms].join(op)
    }

    const TERMS: usize = 100_000;

    #[test]
    fn long_flat_chains_of_every_operator_parse_and_evaluate() {
        // Each of these once built a tree one level per operator, which
        // overflowed the stack in parsing, evaluation or drop at ~52,000 terms.
        let n = TERMS as f64;
        assert_eq!(ev(&chain("1", " + ", TERMS)).unwrap(), n);
        assert_eq!(ev(&chain("1", "+", TERMS)).unwrap(), n);
        // left to right: 100000 - 1 - 1 - ... , not 100000 - (1 - (1 - ...))
        assert_eq!(ev(&format!("{n} - {}", chain("1", " - ", TERMS - 1))).unwrap(), 1.0);
        assert_eq!(
            ev(&chain("nodes", " * ", TERMS)).unwrap_err(),
            "the result is too large"
        );
        assert_eq!(ev(&chain("1", " * ", TERMS)).unwrap(), 1.0);
        assert_eq!(ev(&format!("64 / {}", chain("2", " / ", 6))).unwrap(), 1.0);
        assert_eq!(ev(&chain("1", " / ", TERMS)).unwrap(), 1.0);
        assert_eq!(
            ev(&format!("{} / 0", chain("1", " / ", TERMS))).unwrap_err(),
            "division by zero"
        );
        // mixed precedence: each `1 + 2 * 3 - 4 / 2` is 5
        let mixed = chain("1 + 2 * 3 - 4 / 2", " + ", TERMS / 4);
        assert_eq!(ev(&mixed).unwrap(), 5.0 * (TERMS / 4) as f64);
        // chains inside parentheses and function arguments
        let inner = format!(
            "max({}, ({}))",
            chain("half", " * ", TERMS / 2),
            chain("1", " - ", TERMS / 2)
        );
        assert_eq!(ev(&inner).unwrap(), 0.0);
        // a long chain with a bad term still reports it
        let bad = format!("{} + nodez", chain("1", " + ", TERMS));
        assert!(ev(&bad).unwrap_err().contains("unknown param `nodez`"));
        assert!(
            ev(&format!("{} +", chain("1", " + ", TERMS)))
                .unwrap_err()
                .contains("end of the expression")
        );
    }

    #[test]
    fn a_chains_tree_is_as_deep_as_its_nesting_not_its_length() {
        for op in [" + ", " - ", " * ", " / "] {
            let e = parse(&chain("nodes", op, TERMS)).unwrap();
            assert_eq!(height(&e), 2, "{op}");
        }
        let e = parse(&chain("1 * 2 - -3", " + ", TERMS)).unwrap();
        assert_eq!(height(&e), 3);
        let e = parse(&format!(
            "{}{}{}",
            "(".repeat(60),
            chain("1", " + ", TERMS),
            ")".repeat(60)
        ))
        .unwrap();
        assert_eq!(height(&e), 2);
        // the clone and comparison derived on the tree recurse only as deep
        assert_eq!(e.clone(), e);
    }

    #[test]
    fn templates_split() {
        assert_eq!(split_template("plain").unwrap(), None);
        assert_eq!(
            split_template("${a * 2}Mi").unwrap().unwrap(),
            vec![Piece::Expr("a * 2"), Piece::Text("Mi")]
        );
        assert_eq!(
            split_template("x-${a}-${b}").unwrap().unwrap(),
            vec![Piece::Text("x-"), Piece::Expr("a"), Piece::Text("-"), Piece::Expr("b")]
        );
        assert!(split_template("${a").is_err());
        assert_eq!(as_single_param(" nodes "), Some("nodes"));
        assert_eq!(as_single_param("nodes * 2"), None);
        assert_eq!(as_single_param("2"), None);
    }
}
