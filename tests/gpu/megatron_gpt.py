"""A small Megatron-Core GPT trained for a few steps on 2 GPUs, with tensor parallel 2 (--tp 2) or
data parallel 2 through Megatron's DistributedDataParallel (--dp 2). Deterministic data and init;
rank 0 prints 'LOSSES <json list>'. Uses the local layer spec (no Transformer Engine) and no
sequence parallelism. --mark-steps calls libncclshim.so's ncclshimMarkStep() after every step
(docs/capture.md; a no-op without the shim)."""
import argparse
import ctypes
import json
import os

import torch
import torch.distributed as dist
from megatron.core import parallel_state
from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.models.gpt.gpt_model import GPTModel
from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
from megatron.core.transformer.transformer_config import TransformerConfig


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--gpus-per-node", type=int, default=0,
                        help="emulate nodes of this many ranks for NCCL (NCCL_HOSTID); 0: one real node")
    parser.add_argument("--dist-opt", action="store_true",
                        help="Megatron's distributed optimizer: gradients reduce-scattered, parameters all-gathered")
    parser.add_argument("--mark-steps", action="store_true",
                        help="call ncclshimMarkStep() after every step (when libncclshim.so is preloaded)")
    args = parser.parse_args()
    mark_step = lambda: None
    if args.mark_steps:
        try:
            mark = ctypes.CDLL(None).ncclshimMarkStep  # LD_PRELOAD puts it in the global scope
            mark.argtypes, mark.restype = [], ctypes.c_int64
            mark_step = mark
        except AttributeError:
            pass
    rank = int(os.environ["RANK"])
    if args.gpus_per_node:
        os.environ["NCCL_HOSTID"] = f"node{rank // args.gpus_per_node}"
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    dist.init_process_group("nccl")
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=args.tp, pipeline_model_parallel_size=1)
    torch.manual_seed(1234)
    model_parallel_cuda_manual_seed(1234)
    config = TransformerConfig(num_layers=2, hidden_size=128, num_attention_heads=4, use_cpu_initialization=True,
                               pipeline_dtype=torch.float32, sequence_parallel=False)
    vocab, seq, batch = 256, 64, 4
    model = GPTModel(config=config, transformer_layer_spec=get_gpt_layer_local_spec(), vocab_size=vocab,
                     max_sequence_length=seq).cuda()
    dp = parallel_state.get_data_parallel_world_size()
    if dp > 1:
        ddp_config = DistributedDataParallelConfig(use_distributed_optimizer=args.dist_opt)
        model = DistributedDataParallel(config=config, ddp_config=ddp_config, module=model)
    if args.dist_opt:
        from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
        optimizer = get_megatron_optimizer(OptimizerConfig(optimizer="adam", lr=0.01, use_distributed_optimizer=True),
                                           [model])
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    dp_rank = parallel_state.get_data_parallel_rank()
    gen = torch.Generator().manual_seed(99 + dp_rank)
    losses = []
    for _ in range(args.steps):
        tokens = torch.randint(0, vocab, (batch, seq + 1), generator=gen).cuda()
        inputs, labels = tokens[:, :-1], tokens[:, 1:]
        position_ids = torch.arange(seq, device="cuda").unsqueeze(0).expand(batch, -1)
        mask = torch.tril(torch.ones(seq, seq, device="cuda")).view(1, 1, seq, seq) < 0.5
        if dp > 1:
            model.zero_grad_buffer()
        optimizer.zero_grad(set_to_none=True)
        loss = model(inputs, position_ids, mask, labels=labels).float().mean()
        loss.backward()
        if args.dist_opt:
            model.finish_grad_sync()  # the gradient buffer's reduce-scatter
            optimizer.step()  # steps this rank's shard, then all-gathers the parameters
            reduced = loss.detach().clone()
            dist.all_reduce(reduced, group=parallel_state.get_data_parallel_group())
            losses.append(reduced.item() / dp)
            mark_step()
            continue
        if dp > 1:
            model.finish_grad_sync()
            for p in model.parameters():
                if hasattr(p, "main_grad") and p.main_grad is not None:
                    p.grad = p.main_grad.to(p.dtype)
        optimizer.step()
        reduced = loss.detach().clone()
        dist.all_reduce(reduced, group=parallel_state.get_data_parallel_group())
        losses.append(reduced.item() / dp)
        mark_step()
    if rank == 0:
        print("LOSSES " + json.dumps(losses), flush=True)
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
