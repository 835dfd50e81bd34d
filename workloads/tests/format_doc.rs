//! The complete example in FORMAT.md is a valid scenario that does what the
//! document says.

use schedlab_core::Action;

fn example() -> String {
    let doc = include_str!("../FORMAT.md");
    let start = doc.find("```yaml\n").expect("FORMAT.md has a yaml example") + "```yaml\n".len();
    let len = doc[start..].find("```").expect("the example ends");
    doc[start..start + len].to_string()
}

#[test]
fn the_documented_example_loads_and_expands() {
    let s = workloads::parse_str("FORMAT.md", &example()).expect("the example is valid");
    assert_eq!(s.name(), "example");
    let t = s.expand(1);
    assert_eq!(t.nodes.len(), 8);
    assert_eq!(t.nodes[0].name, "general-0");
    assert_eq!(t.nodes[0].allocatable.cpu_milli, 3900);
    let web = t.workloads.iter().find(|w| w.name == "web").expect("web");
    assert_eq!(web.spec.limits.map(|l| l.memory_bytes), Some(512 << 20));
    let count = |f: fn(&Action) -> bool| t.actions.iter().filter(|a| f(&a.action)).count();
    assert_eq!(count(|a| matches!(a, Action::CreatePod { .. })), 32 + 20);
    assert_eq!(count(|a| matches!(a, Action::KillPod { .. })), 5);
    assert_eq!(count(|a| matches!(a, Action::DeletePod { recreate: false, .. })), 4);
    assert_eq!(count(|a| matches!(a, Action::FailNode { .. })), 1);
    assert_eq!(count(|a| matches!(a, Action::DegradeNode { .. })), 2);
    // the overrides the document mentions work
    let bigger = workloads::parse_str_with("FORMAT.md", &example(), &["nodes=20".into()]).expect("scales");
    assert_eq!(bigger.expand(1).nodes.len(), 20);
}
