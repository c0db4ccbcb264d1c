//! The README's table of environment variables is `flags::FLAGS`, row for row.

use ferrograd::flags::FLAGS;

fn expected_table() -> String {
    let mut t = String::from("| var | default | meaning |\n| --- | --- | --- |\n");
    for f in FLAGS {
        let default = if f.default.is_empty() { "—".to_string() } else { format!("`{}`", f.default) };
        t.push_str(&format!("| `{}` | {} | {} |\n", f.name, default, f.doc));
    }
    t
}

#[test]
fn readme_lists_every_flag_as_the_code_does() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("## Environment variables").expect("README has an environment variables section");
    let section = &readme[start..];
    let table_start = section.find("| var |").expect("a table in the section");
    let table: String =
        section[table_start..].lines().take_while(|l| l.starts_with('|')).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        table,
        expected_table(),
        "README's table differs from flags::FLAGS; it should read:\n{}",
        expected_table()
    );
}

#[test]
fn no_flag_is_listed_twice() {
    for (i, f) in FLAGS.iter().enumerate() {
        assert!(FLAGS[..i].iter().all(|g| g.name != f.name), "{} twice", f.name);
    }
}
