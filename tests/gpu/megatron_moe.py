"""A small Megatron-Core mixture-of-experts GPT trained for a few steps on 4 GPUs: tensor parallel 2
(with sequence parallelism, which Megatron requires for MoE with TP > 1), data parallel 2 and
expert parallel 2, 4 experts (top-2, aux loss 0.01), alltoall token dispatcher, local layer spec (no
Transformer Engine), add_bias_linear=False. Deterministic data and init; rank 0 prints 'LOSSES <json list>'.

The local spec's norm (WrappedTorchNorm) refuses sequence parallelism, so the layers and the final
norm use SequenceParallelLayerNorm below: torch's LayerNorm whose parameters are marked
`sequence_parallel`, so that finalize_model_grads all-reduces their gradients over the TP group
(each TP rank normalises its own part of the sequence)."""
import argparse
import json
import os

import torch
import torch.distributed as dist
from megatron.core import parallel_state
from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig, finalize_model_grads
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.models.gpt.gpt_model import GPTModel
from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
from megatron.core.transformer.transformer_block import TransformerBlockSubmodules
from megatron.core.transformer.transformer_config import TransformerConfig


class SequenceParallelLayerNorm(torch.nn.LayerNorm):
    """torch.nn.LayerNorm built the way Megatron builds its norms (config, hidden_size, eps)."""

    def __init__(self, config, hidden_size, eps=1e-5, **unused):
        super().__init__(hidden_size, eps=eps)
        for param in self.parameters():
            param.sequence_parallel = config.sequence_parallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp", type=int, default=2)
    parser.add_argument("--ep", type=int, default=2)
    parser.add_argument("--experts", type=int, default=4)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--gpus-per-node", type=int, default=0,
                        help="emulate nodes of this many ranks for NCCL (NCCL_HOSTID); 0: one real node")
    parser.add_argument("--seed-period", type=int, default=0,
                        help="replica d reads the data of replica d mod P (0: its own): a job of P replicas "
                             "repeated, whose data-dependent all-to-alls repeat with it (for scaling checks)")
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    if args.gpus_per_node:
        os.environ["NCCL_HOSTID"] = f"node{rank // args.gpus_per_node}"
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    dist.init_process_group("nccl")
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=args.tp, pipeline_model_parallel_size=1,
                                             expert_model_parallel_size=args.ep)
    torch.manual_seed(1234)
    model_parallel_cuda_manual_seed(1234)
    config = TransformerConfig(num_layers=args.layers, hidden_size=128, num_attention_heads=4,
                               use_cpu_initialization=True, pipeline_dtype=torch.float32,
                               tensor_model_parallel_size=args.tp, expert_model_parallel_size=args.ep,
                               sequence_parallel=args.tp > 1,
                               add_bias_linear=False, num_moe_experts=args.experts, moe_router_topk=2,
                               moe_token_dispatcher_type="alltoall", moe_aux_loss_coeff=0.01,
                               moe_grouped_gemm=False)
    layer = get_gpt_layer_local_spec(num_experts=args.experts, moe_grouped_gemm=False)
    layer.submodules.input_layernorm = SequenceParallelLayerNorm
    layer.submodules.pre_mlp_layernorm = SequenceParallelLayerNorm
    block = TransformerBlockSubmodules(layer_specs=[layer] * config.num_layers, layer_norm=SequenceParallelLayerNorm)
    vocab, seq, batch = 256, 64, 4
    model = GPTModel(config=config, transformer_layer_spec=block, vocab_size=vocab, max_sequence_length=seq).cuda()
    model = DistributedDataParallel(config=config, ddp_config=DistributedDataParallelConfig(), module=model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    dp = parallel_state.get_data_parallel_world_size()
    dp_rank = parallel_state.get_data_parallel_rank()
    gen = torch.Generator().manual_seed(99 + (dp_rank % args.seed_period if args.seed_period else dp_rank))
    losses = []
    for _ in range(args.steps):
        tokens = torch.randint(0, vocab, (batch, seq + 1), generator=gen).cuda()
        inputs, labels = tokens[:, :-1], tokens[:, 1:]
        position_ids = torch.arange(seq, device="cuda").unsqueeze(0).expand(batch, -1)
        mask = torch.tril(torch.ones(seq, seq, device="cuda")).view(1, 1, seq, seq) < 0.5
        model.zero_grad_buffer()
        optimizer.zero_grad(set_to_none=True)
        loss = model(inputs, position_ids, mask, labels=labels).float().mean()
        loss.backward()
        finalize_model_grads([model])  # DP (and expert-DP) grads; the norms' grads over TP
        for p in model.parameters():
            if getattr(p, "main_grad", None) is not None:
                p.grad = p.main_grad.to(p.dtype)
        optimizer.step()
        reduced = loss.detach().clone()
        dist.all_reduce(reduced, group=parallel_state.get_data_parallel_group())
        losses.append(reduced.item() / dp)
    if rank == 0:
        print(json.dumps({"tp": args.tp, "dp": dp, "ep": args.ep, "experts": args.experts, "layers": args.layers,
                          "world": dist.get_world_size()}), flush=True)
        print("LOSSES " + json.dumps(losses), flush=True)
    parallel_state.destroy_model_parallel()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
