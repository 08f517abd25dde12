# META-SRE server image: `docker build -t metasre .` then
# `docker run --rm -p 50051:50051 metasre` (serves on 0.0.0.0:50051 with the embedded store).

# -- build: wheels for the project and its dependencies ------------------------------------
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY simulator ./simulator
COPY service ./service
COPY agents ./agents
COPY cli ./cli
COPY protos ./protos
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# -- runtime: the wheels only, an unprivileged user, a store volume --------------------------
FROM python:3.11-slim
RUN groupadd --gid 10001 metasre && useradd --create-home --uid 10001 --gid 10001 metasre \
    && mkdir -p /data && chown metasre:metasre /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels metasre && rm -rf /wheels
# Numeric, so the runtime (and Kubernetes' runAsNonRoot) can tell it is not root without
# reading /etc/passwd. The sandbox needs no root: Landlock, seccomp and rlimits contain agent
# code for an unprivileged user; `metasre serve` refuses to start if the host kernel lacks them.
USER 10001:10001
WORKDIR /home/metasre
VOLUME ["/data"]
EXPOSE 50051
ENV PYTHONUNBUFFERED=1
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["metasre", "health", "--target", "127.0.0.1:50051"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["metasre"]
# --handover: `docker stop` leaves the sessions in the volume's store, and the next container on
# it rebuilds them (agents resume their seats); without it a restart would end every episode.
CMD ["serve", "--host", "0.0.0.0", "--port", "50051", "--store", "/data/metasre.db", "--handover"]
