"""Chat models from "provider:model" strings: OpenAI, Bedrock, OpenAI-compatible servers, fake."""
