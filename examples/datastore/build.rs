fn main() {
    sharded_build::write_datastore_indexes();
}
