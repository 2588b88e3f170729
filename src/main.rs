//! The `lance-csr` binary: the command line (`cli/`), on the `lance_csr` library.

mod cli;

use clap::Parser;
use cli::{run, Cli};

/// Counted, for the memory limit's backstop.
#[global_allocator]
static ALLOCATOR: cap::Cap<mimalloc::MiMalloc> = cap::Cap::new(mimalloc::MiMalloc, usize::MAX);

fn main() {
    lance_csr::install_allocation_meter(|| ALLOCATOR.allocated());
    let cli = Cli::parse();
    // Plans are (de)serialized recursively on the workers (a cluster's scheduler and
    // executors, `query --cluster`): deep plans need more than tokio's 2 MiB stacks.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(32 << 20)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = rt.block_on(run(cli));
    std::process::exit(code);
}
