"""The in-process trainer. `setrl.train.cpu.train_run` is the entry point; `loss` holds the pure
torch loss, `rollout` scoring/judging/packing, `checkpoint` the resumable state, `cli` the commands.
(Nothing is imported here, so `setrl --help` does not pay for importing torch.)"""
