fn main() {
    sharded_build::write_indexes();
}
