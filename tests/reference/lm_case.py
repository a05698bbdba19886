"""One case of a model-level reference (make_dyt_reference.py, make_stream_reference.py): a
batch drawn after the parameters, the parameters, logits, loss and gradients at the start, 20
AdamW steps (make_llama_reference's adamw_losses) and the parameters after them, as entries
named <prefix>.tokens, .targets, .param.<name>, .logits, .loss, .grad.<name>, .adamw.losses and
.final.<name> (the C++ tests read them with tests/support/reference.hpp). And the parameters of
the stream schemes' Pre-LN LM (make_stream_reference.py, make_hc_reference.py,
make_attnres_reference.py)."""

import torch
import torch.nn.functional as F

from make_llama_reference import adamw_losses
from make_nn_reference import B, LM_T, VOCAB, lm_parameters


def stream_lm_parameters(stream_parameters):
    """make_nn_reference's Pre-LN LM weights, and the stream's own from stream_parameters(), a
    dict drawn after the LM's, in tapegrad's names and order: the blocks, then the stream, then
    the final norm. All require grad."""
    p = lm_parameters("pre")
    final = {n: p.pop(n) for n in ("final_norm.weight", "final_norm.bias")}
    p.update(stream_parameters())
    p.update(final)
    return {n: t.requires_grad_() for n, t in p.items()}


def lm_case(prefix, entries, p, logits_of):
    """p: the parameters by name (requiring grad); logits_of(tokens, p) -> (B, T, VOCAB)."""
    tokens = torch.randint(0, VOCAB, (B, LM_T))
    targets = torch.randint(0, VOCAB, (B, LM_T))
    entries += [(f"{prefix}.tokens", tokens), (f"{prefix}.targets", targets)]
    entries += [(f"{prefix}.param.{n}", t.detach().clone()) for n, t in p.items()]

    def loss_of(p):
        return F.cross_entropy(logits_of(tokens, p).reshape(-1, VOCAB), targets.reshape(-1))

    logits = logits_of(tokens, p)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    entries += [(f"{prefix}.logits", logits.detach()), (f"{prefix}.loss", loss.detach())]
    entries += [(f"{prefix}.grad.{n}", t.grad.detach().clone()) for n, t in p.items()]

    losses = adamw_losses(p, loss_of)
    entries.append((f"{prefix}.adamw.losses", torch.tensor(losses)))
    entries += [(f"{prefix}.final.{n}", t.detach().clone()) for n, t in p.items()]
