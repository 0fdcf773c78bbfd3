// `aprs-cloud-bench SUBCOMMAND ARGS…`: the Swift side of `make bench` (see `Tests/bench/run`).
//
// This file only dispatches on the first argument. To add a benchmark, write a type conforming to
// ``Benchmark`` in its own file and list it in `benchmarks` below.

let benchmarks: [any Benchmark.Type] = [
  ParseBench.self, SeedBench.self, PushBench.self, FeedBench.self, HandlerBench.self, JSONBench.self,
  StationsBench.self, FilterBench.self, LongPollBench.self, IdleBench.self,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let benchmark = benchmarks.first(where: { $0.name == name }) else {
  printError("usage: aprs-cloud-bench SUBCOMMAND ARGS…\n\nsubcommands:")
  for benchmark in benchmarks { printError("  \(benchmark.usage)") }
  exitProcess(2)
}
exitProcess(benchmark.run(Array(arguments.dropFirst())))
