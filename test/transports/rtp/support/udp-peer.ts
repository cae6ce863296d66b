import { createSocket, type Socket } from 'node:dgram';

/** A plain UDP socket on loopback that records what it receives, for the far end of a test. */
export class UdpPeer {
  readonly received: { data: Buffer; port: number }[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(
    readonly socket: Socket,
    readonly port: number,
  ) {
    socket.on('message', (data, info) => {
      this.received.push({ data, port: info.port });
      this.waiters = this.waiters.filter((waiter) => {
        if (this.received.length >= waiter.count) {
          waiter.resolve();
          return false;
        }
        return true;
      });
    });
  }

  static async open(port = 0): Promise<UdpPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, '127.0.0.1', () => resolve());
    });
    return new UdpPeer(socket, socket.address().port);
  }

  /** Resolves once `count` datagrams have arrived in all (the test timeout bounds the wait). */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  send(data: Uint8Array, port: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.send(data, port, '127.0.0.1', (error) => (error ? reject(error) : resolve())),
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/** Two free consecutive ports (even, odd) for a peer's RTP and RTCP. */
export async function openPeerPair(): Promise<{ rtp: UdpPeer; rtcp: UdpPeer }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 42_000 + 2 * Math.floor(Math.random() * 4000);
    try {
      const rtp = await UdpPeer.open(base);
      try {
        return { rtp, rtcp: await UdpPeer.open(base + 1) };
      } catch {
        await rtp.close();
      }
    } catch {
      // taken: try another
    }
  }
  throw new Error('no free port pair for the test peer');
}
