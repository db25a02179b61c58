# A minimal sandbox image with toolkit: build it, then copy the static binary
# and its links into an image that holds nothing but busybox.
#
#   docker build -t sandbox .
#   docker run -d --name box sandbox sleep infinity
#   echo '{"command":"uname -a"}' | docker exec -i box toolkit-shell
#   docker exec -i box toolkit mcp            # for an MCP client
FROM golang:1.26 AS build
WORKDIR /src
COPY . .
RUN ./install.sh /out

FROM busybox
COPY --from=build /out/bin/ /usr/local/bin/
WORKDIR /work
