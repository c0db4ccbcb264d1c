//! Prints the default device (`DEV` selects one).

fn main() {
    match ferrograd::Device::try_default() {
        Ok(d) => println!("default device: {d}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
