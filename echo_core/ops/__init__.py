"""Operations: one module per family. Each takes an ``EchoContext`` and returns an
``Envelope``; none prints."""
