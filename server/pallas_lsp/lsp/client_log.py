"""The server's log in the client's output (`window/logMessage`), and pygls's routine noise kept out of it."""

from __future__ import annotations

import logging

from lsprotocol import types


log = logging.getLogger(__name__)


class ClientLogHandler(logging.Handler):
    """Sends log records to the client's output (`window/logMessage`); never to stdout."""

    def __init__(self, server):  # the PallasServer
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        kind = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
                logging.INFO: types.MessageType.Info}.get(record.levelno, types.MessageType.Log)
        try:
            self.server.notify_from_any_thread(self.server.window_log_message,
                                               types.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:  # logging must never take the server down
            pass


class RoutineCancelFilter(logging.Filter):
    """A client cancels requests whose answer is already on its way (VS Code does, on every
    keystroke); pygls warns about each. That is routine, so it is logged only at debug level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Cancel notification for unknown message id"):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger("pallas_lsp").isEnabledFor(logging.DEBUG)


class InvalidParamsFilter(logging.Filter):
    """A request with bad arguments is the client's mistake, answered with InvalidParams; pygls logs
    each with our own traceback. It is logged as one warning line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        from pygls.exceptions import JsonRpcInvalidParams

        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcInvalidParams):
            record.msg, record.args = "%s answered InvalidParams: %s", (str(record.msg % record.args)
                                                                        .replace("Exception occurred for ", ""), error.message)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


logging.getLogger("pygls.protocol.json_rpc").addFilter(RoutineCancelFilter())


logging.getLogger("pygls.protocol.json_rpc").addFilter(InvalidParamsFilter())
