//! The README defines every metric that reports print.

#[test]
fn readme_defines_every_metric() {
    let readme = include_str!("../../README.md");
    for def in results::definitions::METRICS
        .iter()
        .chain(results::definitions::CORRELATIONS)
    {
        assert!(
            readme.contains(&format!("**`{}`**", def.key)),
            "README.md lacks a definition of {}",
            def.key
        );
        assert!(
            readme.contains(def.definition),
            "README.md's definition of {} is out of date",
            def.key
        );
    }
}

#[test]
fn readme_states_the_claims_verdict_rule_word_for_word() {
    let readme = include_str!("../../README.md");
    assert!(
        readme.contains(results::claims::VERDICT_RULE),
        "README.md's claims verdict rule is out of date"
    );
    let section = readme.find("### The claims table").expect("the claims section");
    let metrics = readme.find("\n## Metrics\n").expect("the metrics section");
    assert!(section < metrics, "the claims section comes right before ## Metrics");
    assert!(!readme[section..metrics].contains("\n## "), "nothing between them");
}
