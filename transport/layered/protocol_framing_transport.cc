// LL / LL128 framing of messages over another transport (protocol_framing_transport.h).
#include "transport/layered/protocol_framing_transport.h"

#include <unordered_map>
#include <vector>

#include "common/log.h"

namespace nshim {
namespace {

// One framed message: the inner transport's request on the lines, and the caller's request that
// completes once the lines are sent, or received, checked and decoded.
struct FramedMessage {
  Request inner;
  std::vector<char> lines;
  Request* outer = nullptr;
  void* payload = nullptr;  // a receive's destination
  Protocol protocol = Protocol::kSimple;
  uint32_t flag = 0;
};

class ProtocolFramingTransport final : public Transport {
 public:
  explicit ProtocolFramingTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}

  int rank() const override { return inner_->rank(); }
  int nranks() const override { return inner_->nranks(); }
  const char* name() const override { return inner_->name(); }
  void setProtocol(Protocol protocol) override { protocol_ = protocol; }

  Status postSend(int peer, uint64_t tag, const void* buf, size_t bytes, Request* req) override {
    if (!framing()) return inner_->postSend(peer, tag, buf, bytes, req);
    FramedMessage& message = startFramed(peer, tag, bytes, true, req, nullptr);
    encodeProtocolLines(message.protocol, buf, bytes, message.lines.data(), message.flag);
    return postedOrDropped(req,
                           inner_->postSend(peer, tag, message.lines.data(), message.lines.size(), &message.inner));
  }

  Status postRecv(int peer, uint64_t tag, void* buf, size_t bytes, Request* req) override {
    if (!framing()) return inner_->postRecv(peer, tag, buf, bytes, req);
    FramedMessage& message = startFramed(peer, tag, bytes, false, req, buf);
    return postedOrDropped(req,
                           inner_->postRecv(peer, tag, message.lines.data(), message.lines.size(), &message.inner));
  }

  // Waits on the inner requests of framed messages in place of the callers', then completes the
  // callers' (decoding receives).
  Status waitAll(std::span<Request* const> requests, Deadline deadline) override {
    if (framed_.empty()) return inner_->waitAll(requests, deadline);
    std::vector<Request*> inner(requests.begin(), requests.end());
    for (Request*& req : inner) {
      auto it = framed_.find(req);
      if (it != framed_.end()) req = &it->second->inner;
    }
    const Status waited = inner_->waitAll(inner, deadline);
    finishCompleted();
    NS_RETURN_IF_ERROR(waited);
    for (Request* req : requests) {
      if (req->done() && !req->status().ok()) return req->status();
    }
    return Status::Ok();
  }

  Status progress() override {
    const Status progressed = inner_->progress();
    finishCompleted();
    return progressed;
  }

  PeerBytes peerBytes(int peer) const override { return inner_->peerBytes(peer); }
  void abort(const std::string& reason) override { inner_->abort(reason); }
  Status registerMemory(const void* buf, size_t bytes) override { return inner_->registerMemory(buf, bytes); }
  Status deregisterMemory(const void* buf) override { return inner_->deregisterMemory(buf); }
  WaitNote& waitNote() override { return inner_->waitNote(); }

 private:
  bool framing() const { return protocol_ == Protocol::kLL || protocol_ == Protocol::kLL128; }

  FramedMessage& startFramed(int peer, uint64_t tag, size_t bytes, bool isSend, Request* req, void* payload) {
    req->reset();
    req->peer = peer;
    req->tag = tag;
    req->bytes = bytes;
    req->isSend = isSend;
    auto message = std::make_unique<FramedMessage>();
    message->inner.channel = req->channel;
    message->lines.resize(protocolWireBytes(protocol_, bytes));
    message->outer = req;
    message->payload = payload;
    message->protocol = protocol_;
    message->flag = protocolLineFlag(tag);
    FramedMessage& ref = *message;
    framed_[req] = std::move(message);
    return ref;
  }

  // A post the inner transport refused leaves nothing pending.
  Status postedOrDropped(Request* req, Status posted) {
    if (!posted.ok()) framed_.erase(req);
    return posted;
  }

  void finishCompleted() {
    for (auto it = framed_.begin(); it != framed_.end();) {
      if (!it->second->inner.done()) {
        ++it;
        continue;
      }
      finish(*it->second);
      it = framed_.erase(it);
    }
  }

  void finish(FramedMessage& message) {
    Request& inner = message.inner;
    if (!inner.status().ok() || inner.isSend) {
      message.outer->complete(inner.status());
      return;
    }
    size_t badLine = 0;
    if (decodeProtocolLines(message.protocol, message.lines.data(), message.outer->bytes, message.payload, message.flag,
                            &badLine)) {
      message.outer->complete(Status::Ok());
      return;
    }
    message.outer->complete(NS_ERROR(Code::kRemoteError,
                                     "rank {} received a {} message (tag {:#x}, {} bytes) from rank {} whose line {} "
                                     "does not carry the message's flag: the two ranks framed it differently",
                                     rank(), protocolName(message.protocol), inner.tag, message.outer->bytes,
                                     inner.peer, badLine));
  }

  // Declared before inner_: the inner transport (which may still point into the lines) goes first.
  std::unordered_map<Request*, std::unique_ptr<FramedMessage>> framed_;
  std::unique_ptr<Transport> inner_;
  Protocol protocol_ = Protocol::kSimple;
};

}  // namespace

std::unique_ptr<Transport> createProtocolFramingTransport(std::unique_ptr<Transport> inner) {
  return std::make_unique<ProtocolFramingTransport>(std::move(inner));
}

}  // namespace nshim
