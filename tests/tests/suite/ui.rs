//! Compile-fail cases: one mistake each, the compiler output pinned in `ui/*.stderr`.
//! Regenerate after an intended change with `TRYBUILD=overwrite cargo test -p sharded-tests --test ui`.

#[test]
fn misuse_is_a_spanned_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
